/**
 * A group line may state a baseline (users' trajectories with nothing to compare with in their
 * group, cloud/prepare/groups.ts): then one completion is a group; without one it needs two.
 */
import { describe, expect, it } from "vitest";
import { parseExampleLine } from "./dataset-file";
import { parseGroupLine } from "./group-line";

const prompt = [{ role: "user" as const, content: "Say cat" }];
const one = (content: string) => [{ role: "assistant" as const, content }];

describe("group lines with a baseline", () => {
  it("a single completion is a group only with a baseline, which the reader passes on", () => {
    expect(parseGroupLine({ prompt, completions: [one("No.")], rewards: [0] })).toMatch(
      /at least 2 completions \(or a baseline\)/,
    );
    expect(parseGroupLine({ prompt, completions: [one("No.")], rewards: [0], baseline: 0.5 })).toMatchObject({
      rewards: [0],
      baseline: 0.5,
    });
    expect(parseGroupLine({ prompt, completions: [], rewards: [], baseline: 0.5 })).toMatch(
      /at least 1 completion/,
    );
    const line = JSON.stringify({ prompt, completions: [one("No.")], rewards: [0], baseline: 0.5 });
    expect(parseExampleLine(line, 1)).toEqual({
      kind: "grpo",
      line: 1,
      prompt,
      completions: ["No."],
      rewards: [0],
      baseline: 0.5,
    });
    // A group of answers that called tools takes it too, and refuses one that is not a number.
    const tools = [{ type: "function", function: { name: "set_timer" } }];
    const call = [
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c", type: "function", function: { name: "set_timer", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c", content: "The user denied this call." },
      { role: "assistant", content: "" },
    ];
    expect(
      parseExampleLine(
        JSON.stringify({ prompt, completions: [call], rewards: [0], tools, baseline: 0.5 }),
        1,
      ),
    ).toMatchObject({
      kind: "grpo",
      completions: [""],
      baseline: 0.5,
    });
    expect(parseExampleLine(JSON.stringify({ prompt, completions: [call], rewards: [0], tools }), 1)).toBe(
      "a group needs at least 2 completions",
    );
    expect(
      parseExampleLine(
        JSON.stringify({ prompt, completions: [call], rewards: [0], tools, baseline: "x" }),
        1,
      ),
    ).toBe('"baseline" must be a finite number');
  });
});
