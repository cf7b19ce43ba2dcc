/**
 * trainAdapter with `method: "grpo"` (issue 29) on the tiny base: chat group lines (group-line.ts)
 * are tokenized with the base's own tokenizer into the trainer's GRPO groups, trained, and the
 * manifest's lineage says grpo; a group line is refused by SFT and an SFT line by GRPO.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { suiteDir } from "../../testing/core/temp-dir";
import { sftLines, writeJsonl, writeTinyBase } from "../../testing/cloud/training/test-data";
import { trainAdapter } from "./train";
import { TrainError } from "./train-error";

const dir = suiteDir("macaron-grpo-train-");
let base: string;

const ANIMALS = ["cat", "dog", "fish", "bird", "frog", "lion", "bear", "wolf", "duck", "goat"];

/** "Say <animal>" with four sampled answers: the echo is worth 1, a refusal 0. */
function groupLine(i: number, rewards = [1, 0.5, 0, 0]): string {
  const animal = ANIMALS[i % ANIMALS.length]!;
  return JSON.stringify({
    prompt: [{ role: "user", content: `Say ${animal}` }],
    completions: [`${animal}!`, `A ${animal}?`, "No.", "Hm."].map((content) => [
      { role: "assistant", content },
    ]),
    rewards,
  });
}

beforeAll(async () => {
  base = await writeTinyBase(dir.path);
});

describe("trainAdapter, method grpo", () => {
  it("tokenizes chat groups, trains them and records grpo in the lineage", async () => {
    const lines = [...Array.from({ length: 12 }, (_, i) => groupLine(i)), groupLine(3, [0, 0, 0, 0])];
    const data = await writeJsonl(dir.path, "groups.jsonl", lines);
    const result = await trainAdapter({
      base,
      data,
      out: join(dir.path, "out"),
      id: "echo",
      method: "grpo",
      steps: 6,
      batchSize: 4,
      beta: 0.05,
      clip: 0.3,
      threads: 1,
      device: "cpu",
    });
    const lineage = result.manifest.lineage;
    expect(lineage.method).toBe("grpo");
    expect(lineage.hyperparameters).toMatchObject({ beta: 0.05, clip: 0.3, steps: 6 });
    expect(lineage.dataset.lines).toBe(13);
    // The groups split into training and held-out by prompt hash; the one whose rewards are all
    // equal is counted by the trainer (and left out) wherever it fell.
    const counted = (
      result.report as unknown as { groups: Record<string, { groups: number; zeroVariance: number }> }
    ).groups;
    const all = Object.values(counted);
    expect(all.reduce((n, g) => n + g.groups, 0)).toBe(13);
    expect(all.reduce((n, g) => n + g.zeroVariance, 0)).toBe(1);
    // The lineage counts the groups tokenized; the trainer's report, those with signal.
    expect(lineage.dataset.examples + lineage.heldout.examples).toBe(13);
    expect(result.report.lossCurve).toHaveLength(6);
  });

  it("data whose groups all have equal rewards is refused naming the user's file", async () => {
    const flat = Array.from({ length: 8 }, (_, i) => groupLine(i, [1, 1, 1, 1]));
    const data = await writeJsonl(dir.path, "flat.jsonl", flat);
    const err = await trainAdapter({
      base,
      data,
      out: join(dir.path, "out-flat"),
      id: "flat",
      method: "grpo",
      steps: 1,
      device: "cpu",
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TrainError);
    expect(err).toMatchObject({ code: "empty_data" });
    const message = (err as TrainError).message;
    expect(message).toContain(`in ${data} has rewards that are all equal`);
    expect(message).not.toMatch(/\.training/);
  });

  it("refuses a group under SFT and an SFT line under GRPO", async () => {
    const groups = await writeJsonl(dir.path, "g.jsonl", [groupLine(0), groupLine(1)]);
    const sft = await writeJsonl(dir.path, "s.jsonl", sftLines(4));
    const run = (data: string, method: "sft" | "grpo") =>
      trainAdapter({
        base,
        data,
        out: join(dir.path, `out-${method}`),
        id: "x",
        method,
        steps: 1,
        device: "cpu",
      });
    await expect(run(groups, "sft")).rejects.toThrow(/trains with GRPO only/);
    await expect(run(sft, "grpo")).rejects.toThrow(/GRPO needs a group of sampled answers/);
    await expect(run(sft, "grpo")).rejects.toBeInstanceOf(TrainError);
  });
});
