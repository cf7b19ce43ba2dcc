import { describe, expect, it } from "vitest";
import { jsonDepth } from "./json-depth";

describe("jsonDepth", () => {
  it("counts the deepest nesting of objects and arrays", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth("{}")).toBe(1);
    expect(jsonDepth('{"a":[1,{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonDepth("[".repeat(100) + "]".repeat(100))).toBe(100);
  });

  it("skips brackets inside strings, escaped quotes included", () => {
    expect(jsonDepth('{"a":"[[[{{{"}')).toBe(1);
    expect(jsonDepth('["\\"[[[", ["x"]]')).toBe(2);
  });
});
