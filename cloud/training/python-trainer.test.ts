/**
 * Finding Python and torchrun, and reading the trainer's events: a stand-in trainer (a shell
 * script) prints events the way macaron_trainer does, so every outcome is tested without torch.
 */
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import {
  checkTorch,
  locatePython,
  probeTorch,
  runTrainer,
  trainerCommand,
  type TrainerEvent,
} from "./python-trainer";
import { TrainError } from "./train-error";

const dir = suiteDir("macaron-python-trainer-");

/** A "python" that ignores its arguments and runs `body` (sh). */
async function fakePython(name: string, body: string): Promise<string> {
  const path = join(dir.path, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

describe("locatePython", () => {
  it("takes MACARON_PYTHON, else /usr/bin/python3 when it exists, else python3", () => {
    expect(locatePython({ MACARON_PYTHON: "/opt/py/bin/python" }, () => true)).toBe("/opt/py/bin/python");
    expect(locatePython({}, (p) => p === "/usr/bin/python3")).toBe("/usr/bin/python3");
    expect(locatePython({}, () => false)).toBe("python3");
  });
});

describe("checkTorch / probeTorch", () => {
  it("tell a Python that does not run from one without torch", async () => {
    expect(() => checkTorch(join(dir.path, "no-such-python"))).toThrow(/^Cannot run Python/);
    await expect(probeTorch(join(dir.path, "no-such-python"))).rejects.toMatchObject({
      code: "no_python",
      message: expect.stringContaining("apt-get install python3-torch") as string,
    });
    const python = await fakePython(
      "torchless",
      `echo "ModuleNotFoundError: No module named 'torch'" >&2\nexit 1`,
    );
    expect(() => checkTorch(python)).toThrow(/^PyTorch is not installed/);
    await expect(probeTorch(python)).rejects.toMatchObject({
      code: "no_torch",
      message: expect.stringMatching(
        /^PyTorch is not installed for .*\(ModuleNotFoundError: No module named 'torch'\)/,
      ) as string,
    });
  });
});

describe("trainerCommand", () => {
  const args = ["train", "--base", "b.gguf"];
  it("runs the module directly for one process", () => {
    expect(trainerCommand("/usr/bin/python3", 1, args)).toEqual({
      command: "/usr/bin/python3",
      args: ["-m", "macaron_trainer", ...args],
    });
  });

  it("runs torchrun through the interpreter (with the trainer's launcher fix) for several", () => {
    expect(trainerCommand("/opt/venv/bin/python", 2, args)).toEqual({
      command: "/opt/venv/bin/python",
      args: [
        ...["-m", "macaron_trainer.torchrun", "--standalone", "--nproc_per_node", "2"],
        ...["-m", "macaron_trainer", ...args],
      ],
    });
  });
});

describe("runTrainer", () => {
  it("passes every event on and resolves with the done event; other output is log", async () => {
    const python = await fakePython(
      "ok",
      [
        `echo '{"event":"start","examples":2,"heldoutExamples":0,"steps":1,"trainableParams":8,"device":"cpu","worldSize":1,"torch":"1.13.0","trainer":"0.1.0"}'`,
        `echo 'not json'`,
        `echo '[macaron_trainer] working' >&2`,
        `echo '{"event":"progress","step":1,"steps":1,"epoch":1,"loss":2.5,"tokensPerSecond":100,"etaSeconds":0}'`,
        `echo '{"event":"done","adapter":"a.gguf","report":"r.json"}'`,
      ].join("\n"),
    );
    const events: TrainerEvent[] = [];
    const logs: string[] = [];
    const done = await runTrainer({
      python,
      nproc: 1,
      args: ["train"],
      onEvent: (e) => events.push(e),
      onLog: (l) => logs.push(l),
    });
    expect(done).toEqual({ event: "done", adapter: "a.gguf", report: "r.json" });
    expect(events.map((e) => e.event)).toEqual(["start", "progress", "done"]);
    expect(logs).toEqual(["not json", "[macaron_trainer] working"]);
  });

  it("rejects with the trainer's own error code and message", async () => {
    const message = "loss became NaN at step 3; the last good checkpoint is kept";
    const python = await fakePython(
      "nan",
      `echo '{"event":"error","code":"nan_loss","message":"${message}"}'\nexit 1`,
    );
    const failure = runTrainer({ python, nproc: 1, args: ["train"], onEvent: () => {} });
    await expect(failure).rejects.toBeInstanceOf(TrainError);
    await expect(failure).rejects.toMatchObject({ code: "nan_loss", message });
  });

  it("reports a trainer that dies without an error event, with the end of its stderr", async () => {
    const python = await fakePython("crash", `echo 'Traceback: boom' >&2\nexit 3`);
    await expect(runTrainer({ python, nproc: 1, args: ["train"], onEvent: () => {} })).rejects.toMatchObject({
      code: "trainer_failed",
      message: "The trainer exited with code 3:\nTraceback: boom",
    });
  });

  it("logs and drops events it cannot read; a run that ends without a usable done says so", async () => {
    const python = await fakePython(
      "malformed",
      [
        `echo '{"event":"progress","step":1}'`,
        `echo '{"event":"celebrate"}'`,
        `echo '[1,2]'`,
        `echo '{"event":"heldout","step":0,"loss":null}'`,
        `echo '{"event":"done","adapter":7}'`,
      ].join("\n"),
    );
    const events: TrainerEvent[] = [];
    const logs: string[] = [];
    const run = runTrainer({
      python,
      nproc: 1,
      args: ["train"],
      onEvent: (e) => events.push(e),
      onLog: (l) => logs.push(l),
    });
    await expect(run).rejects.toMatchObject({
      code: "trainer_failed",
      message: expect.stringMatching(
        /^The trainer exited with code 0\.\nThe trainer sent a malformed event \(steps: .*\): \{"event":"progress","step":1\}$/,
      ) as string,
    });
    expect(events).toEqual([{ event: "heldout", step: 0, loss: null }]);
    expect(logs).toHaveLength(4);
    expect(logs[2]).toBe("[1,2]"); // JSON, but not an event: a log line
    expect(logs[1]).toMatch(/^The trainer sent a malformed event \(event: .*\): \{"event":"celebrate"\}$/);
    expect(logs[3]).toMatch(/^The trainer sent a malformed event \(adapter: .*\)/);
  });

  it("kills the trainer when aborted", async () => {
    const python = await fakePython(
      "slow",
      `echo '{"event":"checkpoint","step":1,"path":"/tmp/c"}'\nexec sleep 30`,
    );
    const abort = new AbortController();
    const run = runTrainer({
      python,
      nproc: 1,
      args: ["train"],
      signal: abort.signal,
      onEvent: () => abort.abort(),
    });
    await expect(run).rejects.toMatchObject({ code: "aborted" });
  });
});
