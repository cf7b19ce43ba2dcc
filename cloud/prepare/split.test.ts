import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitOf, splitPosition } from "./split";

describe("held-out split", () => {
  it("puts about the share of prompts in heldout", () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `user: question ${i}`);
    const heldout = keys.filter((k) => splitOf(k, 0.1) === "heldout").length;
    expect(heldout).toBeGreaterThan(150);
    expect(heldout).toBeLessThan(250);
    expect(keys.every((k) => splitOf(k, 0) === "train")).toBe(true);
    expect(keys.every((k) => splitOf(k, 1) === "heldout")).toBe(true);
  });

  it("property: deterministic, and a larger share only moves prompts from train to heldout", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (key, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          expect(splitOf(key, lo)).toBe(splitOf(key, lo));
          expect(splitPosition(key)).toBeGreaterThanOrEqual(0);
          expect(splitPosition(key)).toBeLessThan(1);
          if (splitOf(key, lo) === "heldout") expect(splitOf(key, hi)).toBe("heldout");
        },
      ),
      { numRuns: 500 },
    );
  });
});
