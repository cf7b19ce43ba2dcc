/**
 * MicroBatchChoice's rules: both ways tried before choosing, the faster one then used, the other
 * tried again now and then, and a fixed setting obeyed. What the choice buys on the real engine
 * is measured in bench/README.md ("parallel").
 */
import { describe, expect, it } from "vitest";
import { MicroBatchChoice, microBatchSetting, type MicroBatchMode } from "./micro-batches";

/** `steps` steps of `tokens` tokens, each costing what `cost` says for the way picked. */
function run(
  choice: MicroBatchChoice,
  tokens: number,
  steps: number,
  cost: (mode: MicroBatchMode) => number,
): MicroBatchMode[] {
  const picked: MicroBatchMode[] = [];
  for (let i = 0; i < steps; i++) {
    const mode = choice.pick(tokens);
    picked.push(mode);
    choice.record(tokens, mode, cost(mode));
  }
  return picked;
}

describe("MicroBatchChoice", () => {
  it("tries both ways, then decodes apart where apart is faster", () => {
    const choice = new MicroBatchChoice({ explore: 2, recheckEvery: 1000 });
    const picked = run(choice, 2, 10, (mode) => (mode === "together" ? 24.6 : 18));
    expect(picked.slice(0, 4)).toEqual(["together", "apart", "together", "apart"]);
    expect(picked.slice(4)).toEqual(Array(6).fill("apart"));
    expect(choice.means(2)).toEqual({ together: 24.6, apart: 18 });
  });

  it("keeps one micro-batch where that is faster", () => {
    const choice = new MicroBatchChoice({ explore: 2, recheckEvery: 1000 });
    const picked = run(choice, 4, 10, (mode) => (mode === "together" ? 21.5 : 37.6));
    expect(picked.slice(4)).toEqual(Array(6).fill("together"));
  });

  it("learns each step size on its own", () => {
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 1000 });
    run(choice, 2, 6, (mode) => (mode === "together" ? 25 : 18));
    run(choice, 4, 6, (mode) => (mode === "together" ? 21 : 36));
    expect(choice.pick(2)).toBe("apart");
    expect(choice.pick(4)).toBe("together");
  });

  it("tries the other way again now and then, and follows when costs change", () => {
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 4, closeRatio: 2, alpha: 1 });
    let apartCost = 18;
    const picked = run(choice, 2, 10, (mode) => (mode === "together" ? 25 : apartCost));
    expect(picked.filter((m) => m === "together").length).toBeGreaterThan(1);
    // Apart gets slower (a longer context, another load): the next recheck finds together faster.
    apartCost = 40;
    const later = run(choice, 2, 12, (mode) => (mode === "together" ? 25 : apartCost));
    // Its first step apart costs 40: from then on together, but for one recheck in four steps.
    const [T, A] = ["together", "apart"];
    expect(later).toEqual([A, A, T, T, T, A, T, T, T, A, T, T]);
  });

  it("rechecks a far slower way only rarely", () => {
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 4, farRecheckEvery: 100 });
    // One micro-batch of 4 tokens 21.5 ms, four 37.6 ms: 1.75 times slower, far.
    const picked = run(choice, 4, 60, (mode) => (mode === "together" ? 21.5 : 37.6));
    expect(picked.filter((m) => m === "apart")).toHaveLength(1);
    // Within 1.2 times: every 4 steps.
    const close = new MicroBatchChoice({ explore: 1, recheckEvery: 4, farRecheckEvery: 100 });
    const near = run(close, 4, 60, (mode) => (mode === "together" ? 21.5 : 24));
    expect(near.filter((m) => m === "apart").length).toBeGreaterThan(10);
  });

  it("always decodes a single token (or none) together, and ignores what cannot be a cost", () => {
    const choice = new MicroBatchChoice({ explore: 1 });
    expect(choice.pick(1)).toBe("together");
    choice.record(2, "apart", Number.NaN);
    choice.record(2, "apart", -1);
    expect(choice.means(2).apart).toBeNaN();
  });

  it("a fixed setting is obeyed and learns nothing", () => {
    const choice = new MicroBatchChoice({ fixed: "apart" });
    expect(run(choice, 3, 5, () => 1)).toEqual(Array(5).fill("apart"));
    expect(choice.means(3).apart).toBeNaN();
    expect(microBatchSetting({ MACARON_ENGINE_MICRO_BATCHES: "together" })).toBe("together");
    expect(microBatchSetting({ MACARON_ENGINE_MICRO_BATCHES: "apart" })).toBe("apart");
    expect(microBatchSetting({ MACARON_ENGINE_MICRO_BATCHES: "fast" })).toBeNull();
    expect(microBatchSetting({})).toBeNull();
  });
});
