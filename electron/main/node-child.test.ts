/**
 * The utilityProcess adapter (node-child.ts), driven with a stand-in for utilityProcess.fork:
 * no Electron runtime runs here, so a child_process fork plays a utility process the way
 * Electron lays one out — `process.parentPort` (messages as `{ data }`) and no `process.send`,
 * `process.versions.electron` without `process.defaultApp`, argv [app, script, ...args], exit
 * code only, no stdin. Through it run the same protocol code the app runs in Electron: the
 * contract's code sandbox, the probe-style runNodeScript and node-llama-cpp's CLI launcher.
 */
import { fork } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { CodeSandbox, resolveSandboxEntry } from "../core/contract/sandbox/sandbox";
import { nodeScriptRunner, writeCliLauncher } from "../core/engine/native-build";
import { runNodeScript } from "../core/process/node-child";
import { createUtilityNodeChildStarter, type UtilityFork } from "./node-child";
import { suiteDir } from "../../testing/core/temp-dir";

const dir = suiteDir("macaron-utility-child-");
let shim = "";
beforeAll(async () => {
  shim = join(dir.path, "utility-shim.mjs");
  // What a utility process looks like from inside, built on the fork's IPC channel.
  await writeFile(
    shim,
    `import { EventEmitter } from "node:events";
const send = process.send.bind(process);
const channel = process.channel;
const port = new EventEmitter();
port.postMessage = (m) => send(m);
// Like Electron's port: messages wait until someone listens, and it holds the process only then.
let queued = [];
process.on("message", (m) => {
  if (queued) queued.push(m);
  else port.emit("message", { data: m });
});
channel.unref();
port.on("newListener", (name) => {
  if (name !== "message" || !queued) return;
  channel.ref();
  setImmediate(() => {
    const waiting = queued;
    queued = null;
    for (const m of waiting) port.emit("message", { data: m });
  });
});
Object.defineProperty(process, "parentPort", { value: port });
delete process.send;
Object.defineProperty(process, "versions", { value: { ...process.versions, electron: "41.7.1" } });
`,
  );
  const port = pathToFileURL(join(import.meta.dirname, "../core/process/parent-port.ts")).href;
  await writeFile(
    join(dir.path, "echo.ts"),
    `import { parentPort } from ${JSON.stringify(port)};
const port = parentPort();
console.log(JSON.stringify({ argv: process.argv.slice(2), kind: port?.kind ?? null, env: process.env.ONLY_THIS }));
port?.onMessage((m) => {
  if (m === "bye") process.exit(5);
  port.send({ back: m });
});
`,
  );
});

const tsxLoader = (): string => pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** utilityProcess.fork's stand-in: the options it was given are kept for the assertions. */
function standIn(): UtilityFork & { calls: Array<Parameters<UtilityFork>> } {
  const calls: Array<Parameters<UtilityFork>> = [];
  const forkUtility: UtilityFork = (modulePath, args, options) => {
    calls.push([modulePath, args, options]);
    const stdio = options.stdio as ["ignore", "pipe" | "ignore", "pipe" | "ignore"];
    const child = fork(modulePath, args, {
      env: options.env as NodeJS.ProcessEnv | undefined,
      cwd: options.cwd,
      execArgv: ["--import", pathToFileURL(shim).href, ...(options.execArgv ?? [])],
      stdio: [...stdio, "ipc"],
      serialization: "advanced",
    });
    const events = new EventEmitter();
    child.on("message", (m) => events.emit("message", m));
    // Electron reports an exit code only.
    child.on("exit", (code) => events.emit("exit", code ?? 1));
    return Object.assign(events, {
      get pid() {
        return child.pid;
      },
      stdout: child.stdout,
      stderr: child.stderr,
      postMessage: (m: unknown) => void child.send(m as never),
      kill: () => child.kill(),
    });
  };
  return Object.assign(forkUtility, { calls });
}

describe("the utilityProcess adapter", () => {
  it("forks with serviceName, no inherited execArgv, stdin ignored; messages both ways, exit code", async () => {
    const forkUtility = standIn();
    const start = createUtilityNodeChildStarter(forkUtility);
    const child = start(join(dir.path, "echo.ts"), {
      args: ["one"],
      env: { ONLY_THIS: "yes" },
      execArgv: ["--import", tsxLoader()],
      stderr: "ignore",
      name: "Macaron test helper",
    });
    expect(forkUtility.calls[0]?.[2]).toMatchObject({
      serviceName: "Macaron test helper",
      env: { ONLY_THIS: "yes" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(child.stderr).toBeNull();
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (c: string) => (out += c));
    const back = new Promise<unknown>((resolve) => child.onMessage(resolve));
    const ended = new Promise<[number | null, string | null]>((resolve) =>
      child.onExit((code, signal) => resolve([code, signal])),
    );
    child.send({ x: 1 });
    expect(await back).toEqual({ back: { x: 1 } });
    child.send("bye");
    expect(await ended).toEqual([5, null]);
    // All output is in before the exit is reported.
    expect(JSON.parse(out)).toEqual({ argv: ["one"], kind: "utility", env: "yes" });
    child.send("late");
    child.kill();
  });

  it("runs the contract's code sandbox (requests as messages, a timeout kill replaces the child)", async () => {
    const sandbox = new CodeSandbox(
      { timeoutMs: 1_500, heapMb: 128 },
      resolveSandboxEntry(
        pathToFileURL(join(import.meta.dirname, "../core/contract/sandbox/sandbox.ts")).href,
      ),
      createUtilityNodeChildStarter(standIn()),
    );
    try {
      const add = (code: string) =>
        sandbox.run({ language: "js", code, entry: null, calls: [{ args: [2, 3], expect: 5 }] });
      expect(await add("function add(a, b) { return a + b; }")).toMatchObject({ status: "passed" });
      expect((await add("function add(a, b) { while (true) {} }")).status).toBe("timeout");
      expect(await add("const add = (a, b) => a + b;")).toMatchObject({ status: "passed" });
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it("runs node-llama-cpp's CLI through the launcher with the argv yargs expects in Electron", async () => {
    // A stand-in CLI that parses its arguments the way the real one does (yargs' hideBin).
    const pkg = join(dir.path, "pkg");
    await mkdir(join(pkg, "dist", "cli"), { recursive: true });
    const helpers = pathToFileURL(createRequire(import.meta.url).resolve("yargs/helpers")).href;
    await writeFile(
      join(pkg, "dist", "cli", "cli.mjs"),
      `import helpers from ${JSON.stringify(helpers)};
console.log(JSON.stringify(helpers.hideBin(process.argv)));
`,
    );
    const launcher = await writeCliLauncher(join(pkg, "dist", "cli", "cli.mjs"));
    try {
      const args = ["source", "download", "--gpu", "false"];
      const utility = createUtilityNodeChildStarter(standIn());
      const lines: string[] = [];
      const result = await nodeScriptRunner(utility)(
        { script: launcher.path, args, env: {}, cwd: pkg },
        (line) => lines.push(line),
        new AbortController().signal,
      );
      expect(result).toEqual({ code: 0, signal: null });
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([args]);
      // The same launcher under plain Node's fork.
      const plain = await runNodeScript(
        (await import("../core/process/node-child")).forkNodeChild,
        launcher.path,
        {
          args,
          env: {},
          name: "test",
        },
      );
      expect(JSON.parse(plain.stdout)).toEqual(args);
    } finally {
      await launcher.remove();
    }
  }, 30_000);
});
