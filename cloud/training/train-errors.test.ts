/**
 * `npm run train` fails with one clear line and exit code 1: Python without torch, a bad base,
 * a bad data file, bad options. (The trainer's own errors: python-trainer.test.ts.)
 */
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { runTrainCli } from "../../testing/cloud/training/cli-process";
import { sftLine, sftLines, writeJsonl, writeTinyBase } from "../../testing/cloud/training/test-data";

const dir = suiteDir("macaron-train-errors-");
let base: string;
let data: string;

beforeAll(async () => {
  base = await writeTinyBase(dir.path);
  data = await writeJsonl(dir.path, "data.jsonl", sftLines(4));
});

function train(over: Record<string, string>, env: NodeJS.ProcessEnv = {}) {
  const args = { base, data, out: join(dir.path, "out"), id: "x", ...over };
  return runTrainCli(
    Object.entries(args).flatMap(([k, v]) => [`--${k}`, v]),
    env,
  );
}

describe("npm run train errors", () => {
  it("says how to install torch when the Python it uses has none", async () => {
    // The real interpreter, but without its site packages (where Debian's torch lives).
    const python = join(dir.path, "python-without-torch");
    await writeFile(python, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    await chmod(python, 0o755);
    const run = await train({}, { MACARON_PYTHON: python });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: PyTorch is not installed for .*python-without-torch/);
    expect(run.stderr).toContain("apt-get install python3-torch");
    expect(run.stderr).toContain("MACARON_PYTHON");
  });

  it("refuses a base that is missing or not a model", async () => {
    const missing = await train({ base: join(dir.path, "nope.gguf") });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: Base model: .*nope\.gguf/);
    const junk = join(dir.path, "junk.gguf");
    await writeFile(junk, "not a model at all");
    const corrupt = await train({ base: junk });
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toMatch(/^error: Base model: .*junk\.gguf.* not a GGUF/);
  });

  it("refuses a missing, empty or malformed data file, naming the line", async () => {
    const missing = await train({ data: join(dir.path, "nope.jsonl") });
    expect(missing).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/Data file not found/) as string,
    });
    const empty = await train({ data: await writeJsonl(dir.path, "empty.jsonl", []) });
    expect(empty).toMatchObject({ code: 1, stderr: "error: The data file empty.jsonl is empty.\n" });
    const bad = await writeJsonl(dir.path, "bad.jsonl", [sftLine(1), '{"messages": "hi"}']);
    const malformed = await train({ data: bad });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^error: bad\.jsonl line 2: "messages" must be an array/);
  });

  it("refuses bad options before doing anything", async () => {
    const noId = await runTrainCli(["--base", base, "--data", data, "--out", dir.path]);
    expect(noId.code).toBe(1);
    expect(noId.stderr).toMatch(/^error: Missing --id\./);
    const reserved = await train({ id: "auto" });
    expect(reserved.stderr).toMatch(/--id "auto" must be a plain name/);
    const steps = await train({ steps: "many" });
    expect(steps.stderr).toMatch(/--steps must be an integer/);
  });
});
