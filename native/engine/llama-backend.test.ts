import { describe, expect, it } from "vitest";
import { engineThreads } from "./llama-backend";

describe("engineThreads", () => {
  it("leaves one core to the JS thread", () => {
    expect(engineThreads({}, 2)).toBe(1);
    expect(engineThreads({}, 8)).toBe(7);
    expect(engineThreads({}, 1)).toBe(1);
  });

  it("takes MACARON_ENGINE_THREADS when it is a positive integer", () => {
    expect(engineThreads({ MACARON_ENGINE_THREADS: "3" }, 2)).toBe(3);
    expect(engineThreads({ MACARON_ENGINE_THREADS: "0" }, 4)).toBe(3);
    expect(engineThreads({ MACARON_ENGINE_THREADS: "many" }, 4)).toBe(3);
  });
});
