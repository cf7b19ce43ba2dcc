import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { batchWindowFromEnv, DeltaBatcher } from "./delta-batcher";

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

function collect(windowMs: number) {
  const sent: string[] = [];
  const batcher = new DeltaBatcher((text) => sent.push(text), { windowMs });
  return { sent, batcher };
}

describe("DeltaBatcher", () => {
  it("sends the first piece at once", () => {
    const { sent, batcher } = collect(5);
    batcher.push("Hel");
    expect(sent).toEqual(["Hel"]);
  });

  it("merges the pieces that come within the window into one send when it ends", () => {
    const { sent, batcher } = collect(5);
    batcher.push("a");
    batcher.push("b");
    batcher.push("c");
    expect(sent).toEqual(["a"]);
    vi.advanceTimersByTime(5);
    expect(sent).toEqual(["a", "bc"]);
  });

  it("sends at most one message per window while pieces keep coming", () => {
    const { sent, batcher } = collect(4);
    for (let ms = 0; ms < 40; ms++) {
      batcher.push("x");
      vi.advanceTimersByTime(1);
    }
    batcher.flush();
    expect(sent.join("")).toBe("x".repeat(40));
    // 40 ms at one piece per ms: one send per 4 ms window, plus the first and the flush.
    expect(sent.length).toBeLessThanOrEqual(40 / 4 + 2);
    expect(sent.length).toBeGreaterThan(1);
  });

  it("after an idle window the next piece goes out at once again", () => {
    const { sent, batcher } = collect(5);
    batcher.push("a");
    vi.advanceTimersByTime(5); // the window ends with nothing merged
    vi.advanceTimersByTime(100);
    batcher.push("b");
    expect(sent).toEqual(["a", "b"]);
  });

  it("flush sends what is pending at once and keeps the order", () => {
    const { sent, batcher } = collect(5);
    batcher.push("a");
    batcher.push("b");
    batcher.flush();
    expect(sent).toEqual(["a", "b"]);
    batcher.push("c"); // a new window: at once
    expect(sent).toEqual(["a", "b", "c"]);
    vi.advanceTimersByTime(50);
    expect(sent).toEqual(["a", "b", "c"]);
  });

  it("sets no timer when pieces come slower than the window", () => {
    const { sent, batcher } = collect(5);
    for (const piece of ["a", "b", "c"]) {
      batcher.push(piece);
      // Each went out at once; nothing is left for a timer to send.
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(30);
    }
    expect(sent).toEqual(["a", "b", "c"]);
  });

  it("cancel drops what is pending and everything pushed later", () => {
    const { sent, batcher } = collect(5);
    batcher.push("a");
    batcher.push("b");
    batcher.cancel();
    batcher.push("c");
    batcher.flush();
    vi.advanceTimersByTime(50);
    expect(sent).toEqual(["a"]);
  });

  it("with a window of 0 every piece goes out as it comes", () => {
    const { sent, batcher } = collect(0);
    batcher.push("a");
    batcher.push("b");
    expect(sent).toEqual(["a", "b"]);
  });

  it("ignores empty pieces", () => {
    const { sent, batcher } = collect(5);
    batcher.push("");
    batcher.flush();
    expect(sent).toEqual([]);
  });

  it("never loses or reorders text, for any pieces and timing (flushed at the end)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit: "grapheme", maxLength: 6 }), fc.nat(12)), { maxLength: 60 }),
        fc.integer({ min: 0, max: 8 }),
        (steps, windowMs) => {
          const { sent, batcher } = collect(windowMs);
          for (const [text, gapMs] of steps) {
            batcher.push(text);
            vi.advanceTimersByTime(gapMs);
          }
          batcher.flush();
          const all = steps.map(([text]) => text).join("");
          expect(sent.join("")).toBe(all);
          expect(sent.every((piece) => piece.length > 0)).toBe(true);
          // Nothing is left to come after the flush.
          vi.advanceTimersByTime(100);
          expect(sent.join("")).toBe(all);
        },
      ),
    );
  });
});

describe("batchWindowFromEnv", () => {
  it("reads a number of ms, 0 included, and falls back otherwise", () => {
    expect(batchWindowFromEnv(undefined, 4)).toBe(4);
    expect(batchWindowFromEnv("", 4)).toBe(4);
    expect(batchWindowFromEnv("0", 4)).toBe(0);
    expect(batchWindowFromEnv("8", 4)).toBe(8);
    expect(batchWindowFromEnv("-1", 4)).toBe(4);
    expect(batchWindowFromEnv("soon", 4)).toBe(4);
  });
});
