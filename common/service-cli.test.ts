/**
 * runServiceCli's signals, in a real process: during start-up and once started. SIGTERM: under
 * tsx (how the test runs the service) SIGINT is tsx's own.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const service = join(import.meta.dirname, "../testing/server/slow-start-service.ts");

function run() {
  const child = spawn(process.execPath, ["--import", tsxLoader, service], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  // "close": the process has exited and its output has all been read.
  const exited = once(child, "close") as Promise<[number | null, string | null]>;
  const printed = (line: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (stdout.split("\n").includes(line)) {
          child.stdout.off("data", check);
          resolve();
        }
      };
      child.stdout.on("data", check);
      check();
    });
  return { child, exited, printed, out: () => stdout, err: () => stderr };
}

describe("a service's signals", () => {
  it("SIGTERM during start-up: the start is told, does not begin serving, and the process exits 0", async () => {
    const s = run();
    await s.printed("starting");
    s.child.kill("SIGTERM");
    // Its word that it stops (or its end, which fails below).
    await Promise.race([once(s.child.stderr, "data"), s.exited]);
    expect(s.err()).toContain("SIGTERM: shutting down");
    s.child.stdin.end("go\n");
    expect(await s.exited).toEqual([0, null]);
    expect(s.out().split("\n").filter(Boolean)).toEqual(["starting", "not started"]);
    expect(s.err()).not.toContain("error");
  });

  it("SIGTERM once started: closes and exits 0; a second signal during start-up exits 1 at once", async () => {
    const started = run();
    await started.printed("starting");
    started.child.stdin.end("go\n");
    await started.printed("started");
    started.child.kill("SIGTERM");
    expect(await started.exited).toEqual([0, null]);
    expect(started.out()).toContain("closed");

    const impatient = run();
    await impatient.printed("starting");
    impatient.child.kill("SIGTERM");
    await Promise.race([once(impatient.child.stderr, "data"), impatient.exited]);
    impatient.child.kill("SIGTERM");
    expect(await impatient.exited).toEqual([1, null]);
    expect(impatient.out()).not.toContain("closed");
    impatient.child.stdin.destroy();
  });
});
