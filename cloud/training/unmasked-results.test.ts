/**
 * A tool line whose result the formatter could not find in the layout (`unmaskedResults`) would
 * have that result's tokens inside the loss, learned as if the model had written them: the line
 * is dropped and counted, never trained on. The formatter is a stand-in (no model): what is
 * tested is the line builder's policy, for SFT lines, DPO pairs and GRPO groups alike.
 */
import { describe, expect, it } from "vitest";
import type { ChatFormatter } from "./format-examples";
import { LineBuilder } from "./tokenize-dataset";

const layout = (unmaskedResults: number) => ({
  ids: [5, 6, 7],
  spans: [[0, 3]] as [number, number][],
  resultTokens: 1,
  unmaskedResults,
  calls: 1,
});

/** A formatter whose tool layouts leave `unmasked` results unrendered in the first completion. */
function formatter(unmasked: number): ChatFormatter {
  return {
    toolSft: () => ({ ...layout(unmasked), ids: [1, 2, 5, 6, 7], start: 2, spans: [[2, 5]] }),
    toolPair: () => ({ prompt: [1, 2], chosen: layout(unmasked), rejected: layout(0) }),
    toolGroup: () => ({ prompt: [1, 2], completions: [layout(unmasked), layout(0)] }),
  } as unknown as ChatFormatter;
}

const prompt = [{ role: "user" as const, content: "Find my order." }];
const rounds = [{ text: "", calls: [{ name: "find_order", arguments: {}, result: "ORD-1A2B" }] }];
const tools = [{ name: "find_order" }];
const examples = {
  sft: { kind: "sft", line: 1, prompt, rounds, answer: "ORD-1A2B", tools },
  dpo: {
    kind: "dpo",
    line: 1,
    prompt,
    chosen: "ORD-1A2B",
    rejected: "no",
    chosenRounds: rounds,
    rejectedRounds: rounds,
    tools,
  },
  grpo: {
    kind: "grpo",
    line: 1,
    prompt,
    completions: ["ORD-1A2B", "no"],
    rewards: [1, 0],
    completionRounds: [rounds, rounds],
    tools,
  },
} as const;

describe("tool lines with a result not found in the layout", () => {
  for (const method of ["sft", "dpo", "grpo"] as const)
    it(`are dropped and counted (${method}), and kept when every result was found`, () => {
      const example = examples[method] as unknown as Parameters<LineBuilder["build"]>[0];
      const bad = new LineBuilder(formatter(1), method, 1024, "drop");
      expect(bad.build(example, "data.jsonl")).toBeNull();
      expect(bad.toolCalls).toMatchObject({ unmaskedResults: 1, droppedUnmasked: 1, examples: 0, calls: 0 });
      const good = new LineBuilder(formatter(0), method, 1024, "drop");
      expect(good.build(example, "data.jsonl")).toMatchObject({ kind: method });
      expect(good.toolCalls).toMatchObject({ unmaskedResults: 0, droppedUnmasked: 0, examples: 1 });
    });
});

describe("a user's lone failed trajectory (one answer measured against a baseline)", () => {
  const lone = {
    kind: "grpo",
    line: 1,
    prompt,
    completions: ["no"],
    rewards: [0],
    baseline: 0.5,
    completionRounds: [rounds],
    tools,
  } as unknown as Parameters<LineBuilder["build"]>[0];
  const alone = (unmasked: number) =>
    ({ toolGroup: () => ({ prompt: [1, 2], completions: [layout(unmasked)] }) }) as unknown as ChatFormatter;

  it("is dropped when its result would be learned, and otherwise keeps its baseline", () => {
    const bad = new LineBuilder(alone(1), "grpo", 1024, "drop");
    expect(bad.build(lone, "data.jsonl")).toBeNull();
    expect(bad.toolCalls).toMatchObject({ unmaskedResults: 1, droppedUnmasked: 1, examples: 0 });
    const good = new LineBuilder(alone(0), "grpo", 1024, "drop");
    expect(good.build(lone, "data.jsonl")).toEqual({
      kind: "grpo",
      prompt: [1, 2],
      completions: [[5, 6, 7]],
      rewards: [0],
      completionSpans: [[[0, 3]]],
      baseline: 0.5,
    });
  });
});
