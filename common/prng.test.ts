import { describe, expect, it } from "vitest";
import { hashSeed, mulberry32 } from "./prng";

describe("the one PRNG", () => {
  it("gives the same values for the same seed, in [0, 1)", () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const values = Array.from({ length: 1000 }, () => a());
    expect(values).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(new Set(values).size).toBe(1000);
  });

  it("is mulberry32 (the reference values) and hashSeed is FNV-1a", () => {
    const next = mulberry32(1);
    expect(Math.round(next() * 4294967296)).toBe(2693262067);
    expect(hashSeed("")).toBe(0x811c9dc5);
    expect(hashSeed("a")).toBe(0xe40c292c);
  });
});
