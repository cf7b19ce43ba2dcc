/**
 * Trajectories into agent training data: good ones become OpenAI-style tool-call SFT lines,
 * denied/invalid/failed/stopped calls, thumbs-down answers and answers a follow-up corrected are
 * kept out and counted; in the preference export they are the rejected side of an allowed answer
 * to the same prompt.
 */
import { describe, expect, it } from "vitest";
import type { FeedbackItem } from "../../common/feedback-protocol";
import { prepareExport } from "./prepare";
import {
  ask,
  row,
  timerOutcome as outcome,
  timerStep as step,
  timerTool as timer,
  toolItem,
} from "../../testing/cloud/prepare";

const run = (rows: ReturnType<typeof row>[], type: "sft" | "preference" = "sft") =>
  prepareExport({ domain: "agent", items: rows }, { type, scan: () => ({ findings: [] }), heldoutShare: 0 });

describe("trajectories in the export", () => {
  it("a good trajectory is a tool-call conversation with the tools it called", () => {
    const out = run([
      toolItem("Set a timer for 15 minutes.", "Your timer ends at 10:15.", [
        step(),
        step({ index: 1, tool: "note", arguments: { text: "tea" }, result: "saved" }),
      ]),
    ]);
    expect(out.report.written).toBe(1);
    expect(JSON.parse(out.lines.train[0]!)).toEqual({
      messages: [
        { role: "user", content: "Set a timer for 15 minutes." },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "call_0", type: "function", function: { name: "set_timer", arguments: '{"minutes":15}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_0", content: '{"ok":true,"endsAt":"10:15"}' },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "note", arguments: '{"text":"tea"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "saved" },
        { role: "assistant", content: "Your timer ends at 10:15." },
      ],
      tools: [
        { type: "function", function: timer },
        { type: "function", function: { name: "note" } },
      ],
    });
  });

  it("denied, invalid, failed and stopped calls, thumbs-down and corrected answers are kept out, and counted", () => {
    const q = (n: number) => `Set a timer for ${n} minutes.`;
    const rows = [
      toolItem(q(1), "Done.", [step({ decision: "deny", state: "denied", result: null })]),
      toolItem(q(2), "Done.", [
        step({ state: "invalid", decision: null, result: null, error: "minutes: must be number" }),
      ]),
      toolItem(q(3), "Done.", [step({ state: "error", result: null, error: "timed out" })]),
      toolItem(q(4), "Done.", [step({ state: "stopped", result: null })]),
      // Answered well, then rated bad.
      toolItem(q(5), "Timer set for 5.", [step({ arguments: { minutes: 5 } })]),
      row({
        kind: "rating",
        rating: "bad",
        domain: "agent",
        prompt: ask(q(5)),
        response: "Timer set for 5.",
      }),
      // Answered, then the user's next message corrected it.
      toolItem(q(6), "Timer set for 60.", [step({ arguments: { minutes: 60 } })]),
      row({
        kind: "follow_up",
        rating: null,
        domain: "agent",
        prompt: ask(q(6)),
        response: "Timer set for 60.",
        interaction: { corrected: true },
      }),
      // Good, and also rated good (the same line twice: one is kept).
      toolItem(q(7), "Timer set for 7.", [step({ arguments: { minutes: 7 } })]),
      toolItem(q(7), "Timer set for 7.", [step({ arguments: { minutes: 7 } })], {
        kind: "rating",
        rating: "good",
      }),
      // A good rating of an answer whose call failed is no target either.
      toolItem(q(8), "Sorry.", [step({ state: "error", result: null, error: "boom" })], {
        kind: "rating",
        rating: "good",
      }),
    ];
    const out = run(rows);
    expect(out.report.dropped).toMatchObject({
      toolFailed: 5,
      thumbsDown: 1,
      followUpCorrected: 1,
      duplicate: 1,
    });
    expect(out.report.written).toBe(1);
    expect(out.lines.train[0]).toContain('"arguments":"{\\"minutes\\":7}"');
    const { byKind } = out.report;
    expect(byKind).toMatchObject({ trajectory: 7, rating: 3, follow_up: 1 });
    // Preference: no prompt has both an allowed answer and a failed one.
    expect(run(rows, "preference").report).toMatchObject({ candidates: 0, written: 0 });
    // An answer rated bad after its trajectory was sent is that same answer: no pair with itself.
    const traj5 = rows[4]!;
    const bad5 = row({ ...(JSON.parse(traj5.json) as FeedbackItem), kind: "rating", rating: "bad" });
    expect(run([traj5, bad5], "preference").report).toMatchObject({
      candidates: 1,
      dropped: { sameAnswer: 1 },
    });
  });

  it("a denied call is the rejected side of an allowed answer to the same prompt", () => {
    const q = "Set a timer for 15 minutes.";
    const out = run(
      [
        toolItem(q, "", [
          step({ arguments: { minutes: 50 }, decision: "deny", state: "denied", result: null }),
        ]),
        toolItem(q, "Timer on.", [step()]),
      ],
      "preference",
    );
    expect(out.report).toMatchObject({ candidates: 1, written: 1 });
    const line = JSON.parse(out.lines.train[0]!) as {
      prompt: unknown[];
      chosen: { content: string; tool_calls?: { function: { arguments: string } }[] }[];
      rejected: { content: string; tool_calls?: { function: { arguments: string } }[] }[];
      tools: unknown[];
    };
    expect(line.prompt).toEqual([{ role: "user", content: q }]);
    expect(line.chosen.map((m) => m.tool_calls?.[0]?.function.arguments ?? m.content)).toEqual([
      '{"minutes":15}',
      '{"ok":true,"endsAt":"10:15"}',
      "Timer on.",
    ]);
    expect(line.rejected.map((m) => m.tool_calls?.[0]?.function.arguments ?? m.content)).toEqual([
      '{"minutes":50}',
      "The user denied this call.",
      "",
    ]);
    expect(line.tools).toEqual([{ type: "function", function: timer }]);
  });

  it("failed trajectories keep their outcome: a pair's rejected side with reward 0, else counted as unpaired negatives", () => {
    const q = (n: number) => `Set a timer for ${n} minutes.`;
    const rows = [
      // Prompt 1: an allowed answer and two failed ones (denied; answered but rated bad).
      toolItem(q(1), "Timer on.", [step()]),
      toolItem(q(1), "", [step({ decision: "deny", state: "denied", result: null })]),
      toolItem(q(1), "Timer set, maybe.", [step({ arguments: { minutes: 2 } })], {
        kind: "rating",
        rating: "bad",
      }),
      // Prompt 2: only a failure (an invalid call): nothing to pair it with.
      toolItem(q(2), "Done.", [step({ state: "invalid", decision: null, result: null, error: "bad" })]),
    ];
    const pref = run(rows, "preference");
    // Two pairs on one prompt (the export keeps one line per prompt cluster).
    expect(pref.report).toMatchObject({ candidates: 2, written: 1 });
    expect(pref.report.trajectories).toEqual({
      items: 4,
      succeeded: 1,
      failed: 3,
      byProblem: { denied: 1, ratedBad: 1, invalid: 1 },
      negativesInPairs: 2,
      negativesInGroups: 0,
      negativesUnpaired: 1,
      // What the written lines train on: the near-duplicate fold kept one of the two pairs.
      negativesTrained: { inPairs: 1, inGroups: 0, unpaired: 0 },
    });
    expect(JSON.parse(pref.lines.train[0]!)).toMatchObject({
      outcome: { chosen: { reward: 1, problem: null }, rejected: { reward: 0, problem: "denied" } },
    });
    // The SFT export is unchanged (the allowed answer only, no outcome on the line); it never
    // pairs, so each failed one is an unpaired negative there.
    const sft = run(rows);
    expect(sft.report).toMatchObject({ written: 1, dropped: { toolFailed: 2 } });
    expect(JSON.parse(sft.lines.train[0]!)).not.toHaveProperty("outcome");
    expect(sft.report.trajectories).toMatchObject({
      failed: 3,
      negativesInPairs: 0,
      negativesUnpaired: 3,
      negativesTrained: { inPairs: 0, inGroups: 0, unpaired: 0 },
    });
    // A domain without trajectories has no such count.
    expect(run([]).report.trajectories).toBeUndefined();
  });

  it("calls go by the function name the model was given (prefixed when two servers share a tool)", () => {
    const item = toolItem("Set a timer for 3 minutes.", "Set.", [step({ server: "fx" })]);
    const parsed = JSON.parse(item.json) as FeedbackItem;
    parsed.trajectory!.tools = [{ ...timer, name: "fx_set_timer", server: "fx", tool: "set_timer" }];
    const line = JSON.parse(run([{ ...item, json: JSON.stringify(parsed) }]).lines.train[0]!) as {
      messages: { tool_calls?: { function: { name: string } }[] }[];
      tools: { function: { name: string } }[];
    };
    expect(line.messages[1]!.tool_calls![0]!.function.name).toBe("fx_set_timer");
    expect(line.tools.map((t) => t.function.name)).toEqual(["fx_set_timer"]);
  });

  it("a trajectory without its text (ratings consent) makes no line", () => {
    const out = run([
      row({
        kind: "trajectory",
        rating: null,
        domain: "agent",
        consent: "ratings",
        prompt: null,
        response: null,
        toolOutcome: outcome,
      }),
    ]);
    expect(out.report).toMatchObject({ candidates: 0, written: 0, byKind: { trajectory: 1 } });
  });
});
