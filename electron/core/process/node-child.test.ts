/**
 * The node-child seam with child_process.fork: a script's args, environment, working folder,
 * output, exit code and messages both ways (the child side through parent-port.ts), kill, a
 * start that fails, and runNodeScript's time limit and abort.
 */
import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { forkNodeChild, runNodeScript, type NodeChild } from "./node-child";
import { suiteDir } from "../../../testing/core/temp-dir";

const dir = suiteDir("macaron-node-child-");
beforeAll(async () => {
  const port = pathToFileURL(join(import.meta.dirname, "parent-port.ts")).href;
  // Echoes messages back through parentPort(), says what it was started with, exits on "bye".
  await writeFile(
    join(dir.path, "echo.ts"),
    `import { parentPort } from ${JSON.stringify(port)};
const port = parentPort();
console.log(JSON.stringify({ args: process.argv.slice(2), cwd: process.cwd(), env: process.env.ONLY_THIS, home: process.env.HOME ?? null, kind: port?.kind ?? null }));
console.error("to stderr");
port?.onMessage((m) => {
  if (m === "bye") process.exit(7);
  port.send({ back: m });
});
`,
  );
  await writeFile(join(dir.path, "forever.mjs"), "setInterval(() => undefined, 1000);\n");
  await writeFile(
    join(dir.path, "print.mjs"),
    'console.log(process.argv.slice(2).join(" ")); console.error("warn"); process.exitCode = 3;\n',
  );
});

// An absolute loader URL: `--import tsx` alone resolves against the child's cwd.
const tsx = (): string[] => ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];

function exit(child: NodeChild): Promise<{ code: number | null; signal: string | null; error?: Error }> {
  return new Promise((resolve) => child.onExit((code, signal, error) => resolve({ code, signal, error })));
}

describe("forkNodeChild", () => {
  it("runs a script with its args, only the given environment and cwd; messages go both ways", async () => {
    const child = forkNodeChild(join(dir.path, "echo.ts"), {
      args: ["a", "b c"],
      env: { ONLY_THIS: "yes", PATH: process.env.PATH },
      cwd: dir.path,
      execArgv: tsx(),
      name: "test",
    });
    let out = "";
    let err = "";
    child.stdout?.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr?.setEncoding("utf8").on("data", (c: string) => (err += c));
    const messages: unknown[] = [];
    const answered = new Promise<void>((done) =>
      child.onMessage((m) => {
        messages.push(m);
        // Structured clone: a NaN and a Map survive, as over Electron's parentPort.
        if (messages.length === 1) child.send("bye");
        done();
      }),
    );
    const ended = exit(child);
    child.send({ n: Number.NaN, m: new Map([["k", 1]]) });
    await answered;
    expect(await ended).toEqual({ code: 7, signal: null, error: undefined });
    expect(JSON.parse(out)).toEqual({
      args: ["a", "b c"],
      cwd: dir.path,
      env: "yes",
      home: null,
      kind: "fork",
    });
    expect(err).toContain("to stderr");
    expect(messages).toEqual([{ back: { n: Number.NaN, m: new Map([["k", 1]]) } }]);
    // onExit after the end still answers.
    expect(await exit(child)).toMatchObject({ code: 7 });
  });

  it("kill ends it (SIGTERM); a second kill and a late send do nothing", async () => {
    const child = forkNodeChild(join(dir.path, "forever.mjs"), { env: {}, name: "test" });
    const ended = exit(child);
    child.kill();
    expect(await ended).toMatchObject({ code: null, signal: "SIGTERM" });
    child.kill();
    child.send("late");
  });

  it("a start that fails reports the error as its exit", async () => {
    const child = forkNodeChild(join(dir.path, "forever.mjs"), {
      env: {},
      cwd: join(dir.path, "no-such-folder"),
      name: "test",
    });
    const ended = await exit(child);
    expect(ended.code).toBeNull();
    expect(ended.error?.message).toMatch(/ENOENT/);
  });
});

describe("runNodeScript", () => {
  it("collects the output of a script run to its end", async () => {
    const r = await runNodeScript(forkNodeChild, join(dir.path, "print.mjs"), {
      args: ["x", "y"],
      env: {},
      name: "test",
    });
    expect(r).toEqual({ code: 3, signal: null, stdout: "x y\n", stderr: "warn\n", killed: null });
  });

  it("kills a script at its time limit, and on abort", async () => {
    const timed = await runNodeScript(forkNodeChild, join(dir.path, "forever.mjs"), {
      env: {},
      name: "test",
      timeoutMs: 200,
    });
    expect(timed).toMatchObject({ killed: "timeout", signal: "SIGTERM" });
    const controller = new AbortController();
    const running = runNodeScript(forkNodeChild, join(dir.path, "forever.mjs"), {
      env: {},
      name: "test",
      signal: controller.signal,
    });
    controller.abort();
    expect(await running).toMatchObject({ killed: "aborted", signal: "SIGTERM" });
  });
});
