import { describe, expect, it } from "vitest";
import type { ToolCallRecord } from "../../../common/engine-protocol";
import { fitResults } from "./agent-loop";

const call = (result: unknown): ToolCallRecord => ({ name: "big", arguments: {}, result });
/** A tokenizer of ~4 characters a token, like a real model's on English text. */
const fourCharTokens = {
  countTokens: (texts: string[]) => Promise.resolve(texts.map((t) => Math.ceil(t.length / 4))),
};

describe("tool results fitted to the context", () => {
  it("cuts a 16,000-character result to what a 4,096-token context has left, saying so", async () => {
    const round = { contextSize: 4096, contextTokens: 900 };
    const [fitted] = await fitResults([call("x".repeat(16_000))], round, 1024, {});
    const text = fitted!.result as string;
    expect(text).toMatch(/\[truncated: the result was cut to fit the model's context of 4096 tokens\]$/);
    // One token per byte (no tokenizer): everything fits in 4096 − 900 − 1024 − 48 tokens.
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4096 - 900 - 1024 - 48);
    expect(text.length).toBeGreaterThan(1500);
  });

  it("keeps results that fit, and uses the engine's token counts when it has them", async () => {
    const round = { contextSize: 8192, contextTokens: 500 };
    const small = call("the weather is fine");
    const [kept, other] = await fitResults([small, call({ not: "text" })], round, 512, fourCharTokens);
    expect(kept).toBe(small);
    expect(other!.result).toEqual({ not: "text" });
    // 16,000 characters = 4,000 tokens here: fits in 8192 − 500 − 512 − 48.
    const long = call("y".repeat(16_000));
    expect((await fitResults([long], round, 512, fourCharTokens))[0]).toBe(long);
    // Two of them share the room: each is cut, and the two together fit.
    const both = await fitResults([long, long], round, 512, fourCharTokens);
    const tokens = both.map((r) => Math.ceil((r.result as string).length / 4));
    expect(tokens.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(8192 - 500 - 512 - 96);
    expect(both.every((r) => (r.result as string).includes("[truncated:"))).toBe(true);
  });

  it("a context already full leaves only the note", async () => {
    const [fitted] = await fitResults(
      [call("z".repeat(5000))],
      { contextSize: 512, contextTokens: 500 },
      256,
      {},
    );
    expect(fitted!.result).toBe("\n[truncated: the result was cut to fit the model's context of 512 tokens]");
  });
});
