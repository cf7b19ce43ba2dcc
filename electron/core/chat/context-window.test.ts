import { describe, expect, it } from "vitest";
import type { ChatTurn } from "../engine/types";
import { fitHistory, SUMMARY_HEADER, TOKENS_PER_MESSAGE } from "./context-window";
import { TokenEstimator } from "./token-estimate";

/** One token per character: easy arithmetic. */
const estimate = (text: string): number => text.length;
const turn = (role: ChatTurn["role"], n: number, first = `${role}${n}`): ChatTurn => ({
  role,
  text: `${first}\n${"x".repeat(80)}`,
});
function conversation(pairs: number): ChatTurn[] {
  const turns: ChatTurn[] = [];
  for (let i = 0; i < pairs; i++) turns.push(turn("user", i), turn("assistant", i));
  turns.push(turn("user", pairs));
  return turns;
}

describe("fitHistory", () => {
  it("keeps everything when it fits", () => {
    const history = conversation(2);
    const fitted = fitHistory({
      system: "sys",
      history,
      contextSize: 4096,
      answerTokens: 256,
      strategy: "sliding-window",
      estimate,
    });
    expect(fitted.turns).toEqual([{ role: "system", text: "sys" }, ...history]);
    expect(fitted.context).toEqual({ strategy: "full", includedMessages: 5, droppedMessages: 0 });
  });

  it("sliding window: drops the oldest whole messages, keeps system and latest turn, starts on a user turn", () => {
    const history = conversation(20); // 41 messages of ~90 tokens
    const fitted = fitHistory({
      system: "sys",
      history,
      contextSize: 1024,
      answerTokens: 256,
      strategy: "sliding-window",
      estimate,
    });
    expect(fitted.turns[0]).toEqual({ role: "system", text: "sys" });
    expect(fitted.turns.at(-1)).toEqual(history.at(-1));
    expect(fitted.turns[1]!.role).toBe("user");
    const kept = fitted.turns.length - 1;
    expect(fitted.context).toEqual({
      strategy: "sliding-window",
      includedMessages: kept,
      droppedMessages: 41 - kept,
    });
    const used = fitted.turns.reduce((n, t) => n + t.text.length + TOKENS_PER_MESSAGE, 0);
    expect(used).toBeLessThanOrEqual(1024 - 256 - 103);
    expect(kept).toBeGreaterThan(3);
  });

  it("summary: replaces the dropped part with the first lines of the dropped user messages", () => {
    const history = conversation(20);
    const fitted = fitHistory({
      system: "sys",
      history,
      contextSize: 1024,
      answerTokens: 256,
      strategy: "summary",
      estimate,
    });
    const system = fitted.turns[0]!.text;
    expect(system.startsWith(`sys\n\n${SUMMARY_HEADER}\n- `)).toBe(true);
    expect(fitted.context.strategy).toBe("summary");
    expect(system).not.toContain("assistant0");
    // Newest dropped lines are kept first; the window still ends with the latest turn.
    const firstKept = fitted.turns[1]!.text.split("\n")[0]!;
    const lastDropped = `user${Number(firstKept.slice(4)) - 1}`;
    expect(system).toContain(`- ${lastDropped}`);
    expect(fitted.turns.at(-1)).toEqual(history.at(-1));
  });

  it("keeps the latest turn even when it alone is too long (no room left for a summary)", () => {
    const history = [
      turn("user", 0),
      turn("assistant", 0),
      { role: "user" as const, text: "y".repeat(5000) },
    ];
    const fitted = fitHistory({
      system: null,
      history,
      contextSize: 512,
      answerTokens: 64,
      strategy: "summary",
      estimate,
    });
    expect(fitted.turns).toEqual([history[2]]);
    expect(fitted.context).toEqual({ strategy: "sliding-window", includedMessages: 1, droppedMessages: 2 });
  });
});

describe("TokenEstimator", () => {
  it("starts careful and learns a model's bytes per token", () => {
    const tokens = new TokenEstimator();
    expect(tokens.estimate("x".repeat(300), "m")).toBe(100);
    tokens.observe("m", 1000, 1100); // a byte-level tokenizer plus template tokens
    expect(tokens.estimate("x".repeat(300), "m")).toBe(300);
    expect(tokens.estimate("x".repeat(300), "other")).toBe(100);
    tokens.observe("m", 0, 0);
    expect(tokens.ratio("m")).toBe(1);
  });
});
