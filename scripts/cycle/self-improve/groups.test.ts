/**
 * GRPO groups of a self-improvement cycle (issue 29): every answer of a prompt with its reward,
 * the guards' failures (empty, errored, the same answer to another prompt) never rewarded,
 * groups whose rewards are all equal counted and left out, and the lines read back by the
 * training side's parser as GRPO groups.
 */
import { describe, expect, it } from "vitest";
import { parseExampleLine } from "../../../cloud/training/dataset-file";
import { parseGroupLine } from "../../../cloud/training/group-line";
import { PARTIAL_CREDIT, rewardOf, selectGroups, selfGeneratedSummary } from "./groups";
import type { ScoredSample } from "./score";
import { selfImproveContract, selfImproveTasks } from "./tasks";

const scored = (
  caseId: string,
  k: number,
  output: string,
  judged: { pass?: boolean; score?: number; reason?: string; error?: string } = {},
): ScoredSample => ({
  caseId,
  k,
  seed: k,
  output,
  adapterIds: [],
  latencyMs: 0,
  stopReason: "eos",
  error: judged.error ?? null,
  pass: judged.pass ?? false,
  score: judged.score ?? 0,
  reason: judged.reason ?? "",
});

describe("GRPO groups", () => {
  it("reward a pass 1, a near miss part of its checks, and what the guards fail 0", () => {
    expect(rewardOf(scored("a", 0, "ok", { pass: true, score: 1 }))).toBe(1);
    expect(rewardOf(scored("a", 0, "half", { score: 0.5 }))).toBe(PARTIAL_CREDIT * 0.5);
    // Every check passed but the answer is given to another prompt too: no reward.
    expect(rewardOf(scored("a", 0, "same", { score: 1, reason: "distinct: also the answer to b" }))).toBe(0);
    expect(rewardOf(scored("a", 0, "   ", { score: 1 }))).toBe(0);
    expect(rewardOf(scored("a", 0, "", { error: "aborted", score: 1 }))).toBe(0);
    expect(rewardOf(scored("a", 0, "wrong", { score: 0.99 }))).toBeLessThan(1);
  });

  it("keep every answer with text and its reward; count and leave out groups without signal", () => {
    const contract = selfImproveContract("agent", selfImproveTasks("agent").slice(0, 4));
    const [a, b, c, d] = contract.cases.map((x) => x.id);
    const samples = [
      ...[scored(a!, 0, "right", { pass: true, score: 1 }), scored(a!, 1, "near", { score: 0.5 })],
      ...[scored(a!, 2, "", { score: 0 }), scored(a!, 3, "wrong", { score: 0 })],
      // All fail alike: no signal.
      ...[0, 1, 2].map((k) => scored(b!, k, `miss ${k}`, { score: 0 })),
      // One answer with text only: no group.
      ...[scored(c!, 0, "alone", { pass: true, score: 1 }), scored(c!, 1, "", { error: "timeout" })],
      ...[scored(d!, 0, "x", { score: 0.5 }), scored(d!, 1, "y", { score: 0.25 })],
    ];
    const { groups, stats } = selectGroups(contract, samples);
    expect(groups).toHaveLength(2);
    expect(groups[0]!.completions.map((x) => x[0]!.content)).toEqual(["right", "near", "wrong"]);
    expect(groups[0]!.rewards).toEqual([1, 0.25, 0]);
    expect(groups[0]!.prompt.at(-1)).toEqual(contract.cases[0]!.conversation.at(-1));
    expect(groups[1]!.rewards).toEqual([0.25, 0.125]);
    expect(stats.agent).toEqual({
      groups: 3,
      withSignal: 2,
      signalShare: 2 / 3,
      meanReward: (1 + 0.25 + 0 + 0 + 0 + 0 + 0.25 + 0.125) / 8,
    });
    // The training side reads each line back as a GRPO group.
    for (const [i, g] of groups.entries()) {
      const parsed = parseExampleLine(JSON.stringify(g), i + 1);
      expect(parsed).toMatchObject({
        kind: "grpo",
        rewards: g.rewards,
        completions: g.completions.map((x) => x[0]!.content),
      });
    }
  });

  it("the group line refuses fewer than 2 completions, an empty one and a reward count that differs", () => {
    const prompt = [{ role: "user", content: "Weather in Paris?" }];
    const one = (content: string) => [{ role: "assistant", content }];
    expect(parseGroupLine({ prompt, completions: [one("a")], rewards: [1] })).toMatch(
      /at least 2 completions/,
    );
    expect(parseGroupLine({ prompt, completions: [one("a"), one(" ")], rewards: [1, 0] })).toMatch(
      /empty answer/,
    );
    expect(parseGroupLine({ prompt, completions: [one("a"), one("b")], rewards: [1] })).toMatch(
      /rewards: one reward per completion/,
    );
    expect(parseGroupLine({ prompt, completions: [one("a"), one("b")], rewards: [1, "0"] })).toMatch(
      /rewards/,
    );
    expect(
      parseExampleLine('{"prompt":[{"role":"user","content":"x"}],"completions":[],"rewards":[NaN]}', 3),
    ).toMatch(/not valid JSON/);
    expect(parseGroupLine({ prompt, completions: [one("a"), one("b")], rewards: [1, 0] })).toMatchObject({
      rewards: [1, 0],
    });
  });
});

describe("the cycle's self-generated line", () => {
  const report = {
    sftLines: 2,
    dpoPairs: 2,
    samples: 4,
    temperature: 1,
    groups: {
      agent: { groups: 6, withSignal: 3, signalShare: 0.5, meanReward: 0.4 },
      coding: { groups: 4, withSignal: 1, signalShare: 0.25, meanReward: 0.2 },
    },
  };

  it("names the GRPO groups GRPO trains on, not SFT lines and DPO pairs it never trains", () => {
    expect(selfGeneratedSummary("grpo", report)).toBe(
      "self-generated: 4 GRPO groups with rewards that differ, of 10 (K=4, T=1)",
    );
    expect(selfGeneratedSummary("sft+dpo", report)).toBe(
      "self-generated: 2 SFT lines, 2 DPO pairs (K=4, T=1)",
    );
  });
});
