import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { suiteDir } from "../../testing/core/temp-dir";
import { assertAdapterFits, readGguf } from "../../native/gguf/reader";
import { chatPrompt, countingExamples, preferencePairs } from "../../testing/cloud/trainer/datasets";
import {
  dataFile,
  losses,
  mean,
  preferenceMargin,
  readReport,
  train,
  writeBase,
} from "../../testing/cloud/trainer/fixtures";
import { llamaLogProbs, loadTestLlama } from "../../testing/cloud/trainer/llama-logprobs";
import {
  assertTorchAvailable,
  eventsNamed,
  expectDone,
  startTrainer,
} from "../../testing/cloud/trainer/trainer-process";

/** LoRA training on the tiny demo base: it learns, writes loadable adapters, and is repeatable. */

const tmp = suiteDir("macaron-trainer-");
let base: string;
let sft: string;

beforeAll(async () => {
  base = await writeBase(tmp.path);
  sft = await dataFile(tmp.path, "sft", countingExamples(64));
});

beforeEach(() => void assertTorchAvailable());

const SHORT = ["--steps", "24", "--batch-size", "8"];

describe("train --method sft", () => {
  it("lowers the loss and writes a LoRA GGUF that llama.cpp loads", async () => {
    const heldout = await dataFile(tmp.path, "heldout", countingExamples(80).slice(64));
    const run = await train(tmp.path, "sft", { base, data: sft, flags: [...SHORT, "--heldout", heldout] });
    const done = expectDone(run);
    expect(done).toMatchObject({ adapter: run.out, report: run.report });
    const start = eventsNamed(run, "start")[0]!;
    expect(start).toMatchObject({
      examples: 64,
      heldoutExamples: 16,
      steps: 24,
      device: "cpu",
      worldSize: 1,
    });
    const curve = losses(run);
    expect(curve).toHaveLength(24);
    expect(mean(curve.slice(-4))).toBeLessThan(0.6 * mean(curve.slice(0, 4)));

    const report = readReport(run.report);
    expect(report.method).toBe("sft");
    expect(report.hyperparameters).toMatchObject({ rank: 8, alpha: 16, steps: 24, batchSize: 8 });
    expect(report.data).toMatchObject({ examples: 64 });
    expect(report.lossCurve).toHaveLength(24);
    expect(report.heldout!.lossAfter).toBeLessThan(report.heldout!.lossBefore);
    expect(report.parent).toBeNull();
    expect(existsSync(`${run.out}.ckpt`)).toBe(false);

    const adapter = await readGguf(run.out);
    expect(adapter.metadata["general.type"]).toBe("adapter");
    expect(adapter.metadata["adapter.type"]).toBe("lora");
    expect(adapter.metadata["adapter.lora.alpha"]).toBe(16);
    await assertAdapterFits(run.out, await readGguf(base));

    // llama.cpp loads it and its answer to a training prompt moves towards the trained one.
    const llama = await loadTestLlama();
    try {
      const model = await llama.loadModel({ modelPath: base });
      const prompt = chatPrompt("How many cats? 1");
      const next = "T".charCodeAt(0);
      const before = (await llamaLogProbs(model, 259, prompt)).at(-1)![next]!;
      const after = (await llamaLogProbs(model, 259, prompt, { filePath: run.out, scale: 1 })).at(-1)![next]!;
      expect(after).toBeGreaterThan(before + 1);
      await model.dispose();
    } finally {
      await llama.dispose();
    }
  });

  it("gives byte-identical adapters for the same seed, different ones for another seed", async () => {
    const a = await train(tmp.path, "seed0-a", { base, data: sft, flags: SHORT });
    const b = await train(tmp.path, "seed0-b", { base, data: sft, flags: SHORT });
    const c = await train(tmp.path, "seed1", { base, data: sft, flags: [...SHORT, "--seed", "1"] });
    for (const run of [a, b, c]) expectDone(run);
    expect(readFileSync(a.out).equals(readFileSync(b.out))).toBe(true);
    expect(readFileSync(a.out).equals(readFileSync(c.out))).toBe(false);
  });

  it("resumes after SIGKILL from the last checkpoint and ends with the uninterrupted run's adapter", async () => {
    const flags = ["--steps", "150", "--checkpoint-every", "10"];
    const whole = await train(tmp.path, "whole", { base, data: sft, flags });
    expectDone(whole);
    expect(eventsNamed(whole, "checkpoint")).toHaveLength(14);

    const out = join(tmp.path, "killed.gguf");
    const args = [
      "train",
      "--base",
      base,
      "--data",
      sft,
      "--out",
      out,
      "--report",
      join(tmp.path, "killed.json"),
    ];
    const killed = await startTrainer([...args, ...flags], {
      onEvent: (event, child) => {
        if (event.event === "checkpoint") child.kill("SIGKILL");
      },
    });
    expect(killed.signal).toBe("SIGKILL");
    expect(eventsNamed(killed, "done")).toHaveLength(0);
    expect(existsSync(out)).toBe(false);

    const resumed = await startTrainer([...args, ...flags]);
    expectDone(resumed);
    const start = eventsNamed(resumed, "start")[0]!;
    expect(start.resumedFromStep).toBe(10);
    expect(resumed.stderr).toMatch(/resumed from checkpoint at step 10/);
    expect(eventsNamed(resumed, "progress")[0]!.step).toBe(11);
    expect(readFileSync(out).equals(readFileSync(whole.out))).toBe(true);
    expect(readReport(join(tmp.path, "killed.json")).lossCurve).toHaveLength(150);
  });

  it("ends itself when the process that started it is gone (MACARON_PARENT_PID)", async () => {
    // The starter: a process that stays until killed; the trainer is told to watch it.
    const parent = spawn("sleep", ["600"], { stdio: "ignore" });
    const out = join(tmp.path, "orphan.gguf");
    let killedParent = false;
    const run = await startTrainer(
      [
        "train",
        "--base",
        base,
        "--data",
        sft,
        "--out",
        out,
        "--report",
        join(tmp.path, "orphan.json"),
      ].concat("--steps", "1000", "--checkpoint-every", "5"),
      {
        env: { MACARON_PARENT_PID: String(parent.pid) },
        onEvent: (event) => {
          if (event.event === "checkpoint" && !killedParent) {
            killedParent = true;
            parent.kill("SIGKILL");
          }
        },
      },
    );
    expect(killedParent).toBe(true);
    expect(run.code, run.stderr).toBe(143);
    expect(eventsNamed(run, "done")).toHaveLength(0);
    expect(existsSync(out)).toBe(false);
  });

  it("ignores a checkpoint of another configuration and says so", async () => {
    const dir = join(tmp.path, "shared.ckpt");
    const flags = ["--steps", "60", "--checkpoint-every", "5", "--checkpoint-dir", dir];
    const out = join(tmp.path, "cfg-a.gguf");
    const a = await startTrainer(
      [
        "train",
        "--base",
        base,
        "--data",
        sft,
        "--out",
        out,
        "--report",
        join(tmp.path, "cfg-a.json"),
        ...flags,
      ],
      { onEvent: (e, child) => void (e.event === "checkpoint" && child.kill("SIGKILL")) },
    );
    expect(a.signal).toBe("SIGKILL");
    const b = await train(tmp.path, "cfg-b", { base, data: sft, flags: [...flags, "--lr", "1e-3"] });
    expectDone(b);
    expect(b.stderr).toMatch(/ignoring checkpoint .*config hash differs/);
    expect(eventsNamed(b, "progress")[0]!.step).toBe(1);
  });

  it("--from continues the parent adapter with its rank, alpha and targets", async () => {
    const parent = await train(tmp.path, "parent", {
      base,
      data: sft,
      flags: [...SHORT, "--rank", "4", "--alpha", "4", "--targets", "attn_q,attn_v"],
    });
    expectDone(parent);
    const fresh = losses(parent)[0]!;
    const child = await train(tmp.path, "child", {
      base,
      data: sft,
      flags: [...SHORT, "--from", parent.out],
    });
    expectDone(child);
    expect(losses(child)[0]!).toBeLessThan(fresh * 0.8);
    const report = readReport(child.report);
    expect(report.hyperparameters).toMatchObject({ rank: 4, alpha: 4, targets: ["attn_q", "attn_v"] });
    expect(report.parent).toMatchObject({ path: parent.out });
    expect(report.parent!.sha256).toMatch(/^[0-9a-f]{64}$/);
    const tensors = (await readGguf(child.out)).tensors.map((t) => t.name);
    expect(tensors.every((n) => /attn_[qv]\.weight\.lora_[ab]$/.test(n))).toBe(true);
  });
});

describe("train --method dpo", () => {
  it("raises the chosen-minus-rejected log-prob margin", async () => {
    const pairs = preferencePairs(16);
    const data = await dataFile(tmp.path, "dpo", pairs);
    const run = await train(tmp.path, "dpo", {
      base,
      data,
      flags: ["--method", "dpo", "--steps", "16", "--batch-size", "4", "--beta", "0.1"],
    });
    expectDone(run);
    const curve = losses(run);
    // DPO's loss starts at log 2 (policy = reference) and falls as the margin grows.
    expect(curve[0]!).toBeCloseTo(Math.log(2), 4);
    expect(curve.at(-1)!).toBeLessThan(curve[0]!);
    const pair = pairs[0] as { prompt: number[]; chosen: number[]; rejected: number[] };
    const before = await preferenceMargin(base, pair);
    const after = await preferenceMargin(base, pair, run.out);
    console.log(`DPO margin on pair 0: ${before.toFixed(3)} -> ${after.toFixed(3)}`);
    expect(after).toBeGreaterThan(before + 1);
  });
  it("reports the held-out preference accuracy before and after", async () => {
    const pairs = preferencePairs(24);
    const data = await dataFile(tmp.path, "dpo-acc", pairs.slice(0, 16));
    const heldout = await dataFile(tmp.path, "dpo-acc-heldout", pairs.slice(16));
    const run = await train(tmp.path, "dpo-acc", {
      base,
      data,
      flags: ["--method", "dpo", "--steps", "16", "--batch-size", "4", "--beta", "0.1", "--heldout", heldout],
    });
    expectDone(run);
    const h = readReport(run.report).heldout as unknown as {
      examples: number;
      preferenceAccuracyBefore: number;
      preferenceAccuracyAfter: number;
    };
    console.log(
      `DPO held-out preference accuracy: ${h.preferenceAccuracyBefore} -> ${h.preferenceAccuracyAfter}`,
    );
    expect(h.examples).toBe(8);
    expect(h.preferenceAccuracyAfter).toBeGreaterThan(h.preferenceAccuracyBefore);
    expect(h.preferenceAccuracyAfter).toBe(1);
  });
});
