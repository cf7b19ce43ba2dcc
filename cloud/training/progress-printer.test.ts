/** What `npm run train` prints: one line per report, or one line rewritten on a TTY. */
import { describe, expect, it } from "vitest";
import { parseTrainArgs } from "./cli-args";
import { formatDuration, progressPrinter } from "./progress-printer";
import type { TrainerEvent } from "./python-trainer";

const progress = (step: number, steps = 10): { type: "trainer"; event: TrainerEvent } => ({
  type: "trainer",
  event: { event: "progress", step, steps, epoch: 1, loss: 1.23456, tokensPerSecond: 987.6, etaSeconds: 75 },
});

describe("progressPrinter", () => {
  it("prints step/steps, loss, tokens/s and ETA, at most one line a second (first and last always)", () => {
    let out = "";
    let clock = 0;
    const printer = progressPrinter({ write: (t) => (out += t), tty: false, now: () => clock });
    for (let step = 1; step <= 10; step++) {
      clock += 300;
      printer.onProgress(progress(step));
    }
    expect(out.split("\n").filter(Boolean)).toEqual([
      "step 1/10  loss 1.2346  988 tok/s  ETA 1:15",
      "step 5/10  loss 1.2346  988 tok/s  ETA 1:15",
      "step 9/10  loss 1.2346  988 tok/s  ETA 1:15",
      "step 10/10  loss 1.2346  988 tok/s  ETA 1:15",
    ]);
  });

  it("GRPO: says how many groups carry no signal and prints the KL term", () => {
    let out = "";
    const printer = progressPrinter({ write: (t) => (out += t), tty: false });
    const start = { event: "start", examples: 9, heldoutExamples: 1, steps: 4, trainableParams: 10 } as const;
    const where = { device: "cpu", worldSize: 1, torch: "1.13", trainer: "0.1.0" };
    printer.onProgress({
      type: "trainer",
      event: { ...start, ...where, groups: 12, zeroVarianceGroups: 3 },
    });
    const step = progress(1, 4).event as Extract<TrainerEvent, { event: "progress" }>;
    printer.onProgress({ type: "trainer", event: { ...step, policyLoss: 1.2, kl: 0 } });
    expect(out.split("\n").filter(Boolean).slice(1)).toEqual([
      "GRPO: 3 of 12 groups have rewards that are all equal (no signal): left out",
      "step 1/4  loss 1.2346  KL 0.0000  988 tok/s  ETA 1:15",
    ]);
  });

  it("rewrites one line on a TTY and ends it before anything else", () => {
    let out = "";
    const printer = progressPrinter({ write: (t) => (out += t), tty: true });
    printer.onProgress(progress(1));
    printer.onProgress(progress(2));
    printer.onProgress({ type: "trainer", event: { event: "heldout", step: 2, loss: 0.5 } });
    expect(out).toBe(
      "\r\x1b[2Kstep 1/10  loss 1.2346  988 tok/s  ETA 1:15" +
        "\r\x1b[2Kstep 2/10  loss 1.2346  988 tok/s  ETA 1:15\n" +
        "held-out loss at step 2: 0.5000\n",
    );
  });

  it("formats durations", () => {
    expect([formatDuration(0), formatDuration(75), formatDuration(3725)]).toEqual([
      "0:00",
      "1:15",
      "1:02:05",
    ]);
  });
});

describe("parseTrainArgs", () => {
  it("maps the command line onto TrainOptions", () => {
    const { options } = parseTrainArgs([
      ...["--base", "b.gguf", "--data", "d.jsonl", "--out", "o", "--id", "x", "--method", "dpo"],
      ...["--epochs", "2", "--lr", "1e-3", "--targets", "attn_q, output", "--max-length-policy", "truncate"],
    ]);
    expect(options).toMatchObject({
      base: "b.gguf",
      method: "dpo",
      epochs: 2,
      lr: 0.001,
      targets: ["attn_q", "output"],
      maxLengthPolicy: "truncate",
    });
  });

  it("refuses what the trainer would misread", () => {
    const base = ["--base", "b", "--data", "d", "--out", "o", "--id", "x"];
    expect(() => parseTrainArgs([...base, "--method", "ppo"])).toThrow(/--method must be one of sft, dpo/);
    expect(() => parseTrainArgs([...base, "--rank", "2.5"])).toThrow(/--rank must be an integer/);
    expect(() => parseTrainArgs([...base, "--bogus"])).toThrow(/bogus/);
  });
});
