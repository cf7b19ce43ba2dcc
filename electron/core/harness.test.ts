import { describe, expect, it } from "vitest";
import { harnessParts, harnessVersion } from "./harness";

describe("harnessVersion", () => {
  it("is the app version plus a stable short hash that changes with any part", () => {
    const v = harnessVersion("1.2.3");
    expect(v).toMatch(/^1\.2\.3\+[0-9a-f]{12}$/);
    expect(harnessVersion("1.2.3")).toBe(v);
    expect(harnessVersion("1.2.4").split("+")[1]).toBe(v.split("+")[1]);
    expect(harnessVersion("1.2.3", harnessParts("Another prompt"))).not.toBe(v);
    expect(harnessVersion("1.2.3", { ...harnessParts(), contract: "contract:v2" })).not.toBe(v);
    // Parts are length-prefixed: moving text from one part to another changes the hash.
    expect(harnessVersion("x", { a: "bc", b: "" })).not.toBe(harnessVersion("x", { a: "b", b: "c" }));
  });
});
