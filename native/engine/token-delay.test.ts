import { describe, expect, it } from "vitest";
import { holdToken, tokenDelayMs } from "./token-delay";

describe("MACARON_ENGINE_TOKEN_DELAY_MS", () => {
  it("is off unless set to a positive number, and capped at a second", () => {
    expect(tokenDelayMs({})).toBe(0);
    expect(tokenDelayMs({ MACARON_ENGINE_TOKEN_DELAY_MS: "0" })).toBe(0);
    expect(tokenDelayMs({ MACARON_ENGINE_TOKEN_DELAY_MS: "-5" })).toBe(0);
    expect(tokenDelayMs({ MACARON_ENGINE_TOKEN_DELAY_MS: "soon" })).toBe(0);
    expect(tokenDelayMs({ MACARON_ENGINE_TOKEN_DELAY_MS: "20" })).toBe(20);
    expect(tokenDelayMs({ MACARON_ENGINE_TOKEN_DELAY_MS: "60000" })).toBe(1_000);
  });

  it("holds the thread at least the given time (and not at all at 0)", () => {
    const start = performance.now();
    holdToken(0);
    holdToken(15);
    // A lower bound only: the hold waits at least this long, however busy the machine.
    expect(performance.now() - start).toBeGreaterThanOrEqual(14);
  });
});
