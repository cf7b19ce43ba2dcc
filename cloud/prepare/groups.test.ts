/**
 * Users' trajectories as GRPO groups (the `groups` export, groups.ts): every answer that called
 * tools keeps its reward, answers to one prompt are one group, a group without a contrast states
 * the baseline so a lone failure has a negative advantage; the preference export's pairs are
 * unchanged; the report counts which negatives the written lines train on; an answer with nothing
 * to learn makes no line.
 */
import { describe, expect, it } from "vitest";
import type { StoredItem } from "../store";
import { timerStep as step, timerTool as timer, toolItem } from "../../testing/cloud/prepare";
import { parseExampleLine } from "../training/dataset-file";
import { USER_BASELINE, USER_GROUP_SOURCE, type UserGroupLine } from "./groups";
import { prepareExport } from "./prepare";

const denied = step({ arguments: { minutes: 50 }, decision: "deny", state: "denied", result: null });
const invalid = step({ state: "invalid", decision: null, result: null, error: "minutes must be a number" });

const run = (rows: StoredItem[], type: "sft" | "preference" | "groups") =>
  prepareExport({ domain: "agent", items: rows }, { type, scan: () => ({ findings: [] }), heldoutShare: 0 });

/** Each answer's advantage as the trainer computes it (cloud/trainer/macaron_trainer/data.py). */
function advantages(line: UserGroupLine): number[] {
  const r = line.rewards;
  if (line.baseline !== undefined) return r.map((x) => x - line.baseline!);
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  const std = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / r.length);
  return r.map((x) => (x - mean) / (std + 1e-4));
}

const q = (n: number) => `Set a timer for ${n} minutes.`;
const rows = () => [
  // A success and a denied failure to one prompt: a DPO pair, and a group with its own contrast.
  toolItem(q(15), "Timer on.", [step()]),
  toolItem(q(15), "", [denied]),
  // A failure alone (an invalid call): nothing to pair it with.
  toolItem(q(20), "Done.", [invalid]),
  // A success alone.
  toolItem(q(30), "Thirty minutes, starting now.", [step({ arguments: { minutes: 30 } })]),
];

describe("users' trajectories as GRPO groups", () => {
  it("a lone failure is a group with a negative advantage; a paired one keeps its DPO pair", () => {
    const pref = run(rows(), "preference");
    expect(pref.report).toMatchObject({ type: "preference", written: 1 });
    expect(JSON.parse(pref.lines.train[0]!)).toMatchObject({
      prompt: [{ role: "user", content: q(15) }],
      outcome: { chosen: { reward: 1 }, rejected: { reward: 0, problem: "denied" } },
    });
    expect(pref.report.trajectories).toMatchObject({
      negativesInPairs: 1,
      negativesUnpaired: 1,
      negativesTrained: { inPairs: 1, inGroups: 0, unpaired: 0 },
    });

    const out = run(rows(), "groups");
    expect(out.report).toMatchObject({ type: "groups", candidates: 3, written: 3 });
    const lines = out.lines.train.map((l) => JSON.parse(l) as UserGroupLine);
    const byPrompt = new Map(lines.map((l) => [l.prompt.at(-1)!.content, l]));

    // The pair's prompt: an ordinary group, relative to its own mean (no baseline).
    const paired = byPrompt.get(q(15))!;
    expect(paired.rewards).toEqual([1, 0]);
    expect(paired).not.toHaveProperty("baseline");
    expect(paired.outcome.map((o) => o.problem)).toEqual([null, "denied"]);
    expect(advantages(paired)[1]).toBeLessThan(0);

    // The lone failure: measured against the baseline, so trained away from.
    const lone = byPrompt.get(q(20))!;
    expect(lone).toMatchObject({ rewards: [0], baseline: USER_BASELINE, source: USER_GROUP_SOURCE });
    expect(lone.outcome).toEqual([{ reward: 0, problem: "invalid" }]);
    expect(advantages(lone)).toEqual([-0.5]);
    // Laid out with its call and what the agent loop told the model (context, never learned).
    expect(lone.completions[0]!.map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
    expect(lone.completions[0]![1]!.content).toMatch(/^Error: the call was not made/);
    expect(lone.tools).toEqual([{ type: "function", function: timer }]);

    // The lone success: pulled towards, half as hard as a contrast.
    expect(advantages(byPrompt.get(q(30))!)).toEqual([0.5]);

    // The training reader takes every one as a GRPO group of answers that called tools.
    for (const [i, l] of out.lines.train.entries()) {
      const parsed = parseExampleLine(l, i + 1);
      expect(parsed).toMatchObject({ kind: "grpo" });
      if (typeof parsed === "string" || parsed.kind !== "grpo") throw new Error(JSON.stringify(parsed));
      expect(parsed.completionRounds).toHaveLength(parsed.completions.length);
      expect(parsed.baseline).toBe(lines[i]!.baseline);
    }

    // Both negatives are trained now, the unpaired one through the baseline.
    expect(out.report.trajectories).toEqual({
      items: 4,
      succeeded: 2,
      failed: 2,
      byProblem: { denied: 1, invalid: 1 },
      negativesInPairs: 0,
      negativesInGroups: 2,
      negativesUnpaired: 1,
      negativesTrained: { inPairs: 0, inGroups: 2, unpaired: 1 },
    });
  });

  it("answers that all failed share the baseline; an identical answer counts once", () => {
    const out = run(
      [
        toolItem(q(5), "", [denied]),
        toolItem(q(5), "", [denied]), // the same answer again
        toolItem(q(5), "Set, I think.", [step({ arguments: { minutes: 6 } })], {
          kind: "rating",
          rating: "bad",
        }),
      ],
      "groups",
    );
    const line = JSON.parse(out.lines.train[0]!) as UserGroupLine;
    expect(line.rewards).toEqual([0, 0]);
    expect(line.baseline).toBe(USER_BASELINE);
    expect(line.outcome.map((o) => o.problem)).toEqual(["denied", "ratedBad"]);
    expect(out.report.trajectories!.negativesTrained).toEqual({ inPairs: 0, inGroups: 2, unpaired: 2 });
  });

  it("counts only what the written lines train on: a held-out or filtered group trains nothing", () => {
    const all = prepareExport(
      { domain: "agent", items: rows() },
      { type: "groups", scan: () => ({ findings: [] }), heldoutShare: 1 },
    );
    expect(all.report.splits).toEqual({ train: 0, heldout: 3 });
    expect(all.report.trajectories!.negativesTrained).toEqual({ inPairs: 0, inGroups: 0, unpaired: 0 });
    // Text without the text consent never leaves: the lone failure's group is dropped.
    const noConsent = run(
      [toolItem(q(20), "Done.", [invalid], { consent: "ratings" }), ...rows().slice(0, 2)],
      "groups",
    );
    expect(noConsent.report.trajectories!.negativesTrained).toEqual({ inPairs: 0, inGroups: 1, unpaired: 0 });
  });

  it("an answer with nothing to learn makes no line: no calls, no text", () => {
    const out = run(
      [
        // A failed answer whose trajectory holds no call and no text: the protocol refuses it.
        toolItem(q(40), "", []),
        // The prompt or the answer missing: nothing to lay out.
        toolItem(q(41), "", [invalid], { response: null }),
        toolItem("", "Done.", [invalid], { prompt: [] }),
      ],
      "groups",
    );
    expect(out.report).toMatchObject({ candidates: 1, written: 0, dropped: { malformed: 1 } });
    expect(out.lines.train).toEqual([]);
    expect(out.report.trajectories).toBeUndefined();
  });
});
