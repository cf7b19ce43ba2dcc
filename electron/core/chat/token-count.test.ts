/**
 * chat.countTokens: the loaded model's tokenizer when there is one (through the engine), the
 * byte estimate when not, and the room one message has in the prompt (as fitHistory fits it).
 */
import { describe, expect, it } from "vitest";
import { startFakeCore } from "../../../testing/core/fake-core";
import { FakeEngine, fakeTokenCount, loadedModel } from "../../../testing/engine/fake-engine";
import { promptRoom, TOKENS_PER_MESSAGE } from "./context-window";
import { TokenCounter } from "./token-count";
import { TokenEstimator } from "./token-estimate";
import { FALLBACK_CONTEXT_SIZE } from "./turn-deps";

describe("TokenCounter", () => {
  it("counts with the loaded model's tokenizer, and says so", async () => {
    const engine = new FakeEngine();
    engine.loaded = loadedModel("/m/tiny.gguf");
    const text = "```notes.txt\none two three four\n```\nsummarise this";
    const count = await new TokenCounter(engine, () => 100).count(text);
    expect(count).toEqual({
      tokens: fakeTokenCount(text),
      source: "tokenizer",
      room: promptRoom(512, 100) - TOKENS_PER_MESSAGE,
      contextSize: 512,
    });
  });

  it("estimates when no model is loaded (the default context), and says so", async () => {
    const engine = new FakeEngine();
    const text = "x".repeat(4_000);
    const count = await new TokenCounter(engine, () => 1024).count(text);
    expect(count.source).toBe("estimate");
    expect(count.tokens).toBe(new TokenEstimator().estimate(text, null));
    expect(count.contextSize).toBe(FALLBACK_CONTEXT_SIZE);
    expect(count.room).toBe(promptRoom(FALLBACK_CONTEXT_SIZE, 1024) - TOKENS_PER_MESSAGE);
  });

  it("falls back to the estimate when the engine cannot count", async () => {
    const engine = new FakeEngine();
    engine.loaded = loadedModel("/m/tiny.gguf");
    engine.countTokens = () => Promise.reject(new Error("engine restarting"));
    const logged: string[] = [];
    const count = await new TokenCounter(
      engine,
      () => 100,
      (m) => logged.push(m),
    ).count("a b c");
    expect(count.source).toBe("estimate");
    expect(logged).toHaveLength(1);
  });
});

describe("chat.countTokens", () => {
  it("answers through dispatch, validated, with the demo model's tokenizer", async () => {
    const s = await startFakeCore();
    const count = await s.call<{ tokens: number; source: string; room: number }>("chat.countTokens", {
      text: "one two three",
    });
    expect(count).toMatchObject({ tokens: 3, source: "tokenizer" });
    expect(count.room).toBeGreaterThan(0);
    await expect(s.call("chat.countTokens", { text: 5 })).rejects.toThrow();
    await expect(s.call("chat.countTokens", { text: "x", extra: 1 })).rejects.toThrow();
  });
});
