import { ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { SLOW_FILES } from "../testing/tiers/slow-tests";

const root = resolve(import.meta.dirname, "..");

describe("test tiers", () => {
  it("lists only test files that exist", () => {
    const missing = SLOW_FILES.filter((f) => !existsSync(resolve(root, f)) || !/\.test\.tsx?$/.test(f));
    expect(missing).toEqual([]);
  });

  it("in the fast tier, starting a process or a worker fails and names the slow tier", () => {
    // This file runs in the fast project (vitest.config.ts), under testing/tiers/process-guard.ts.
    expect(() => spawn(process.execPath, ["-e", ""])).toThrow(/slow tier.*testing\/tiers\/slow-tests\.ts/);
    expect(() => new Worker("", { eval: true })).toThrow(/slow tier/);
    // The class's own method, which the functions above wrap.
    // (Internal in Node's types, public at run time.)
    const child = new ChildProcess() as unknown as { spawn(options: object): void };
    expect(() => child.spawn({ file: process.execPath, args: [process.execPath, "-e", ""] })).toThrow(
      /slow tier/,
    );
  });
});
