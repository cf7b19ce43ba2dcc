/**
 * MicroBatchChoice's rules: both ways tried before choosing, the faster one (median of its recent
 * steps) then used, the other tried again often while close and rarely when far slower, a faster
 * recheck taken at once, and a fixed setting obeyed. What the choice buys on the real engine is
 * measured in bench/README.md ("parallel").
 */
import { describe, expect, it } from "vitest";
import {
  hasChoice,
  MicroBatchChoice,
  microBatchSetting,
  stepShape,
  type MicroBatchMode,
} from "./micro-batches";

const [T, A]: MicroBatchMode[] = ["together", "apart"];

/** `steps` steps of `tokens` tokens, the i-th costing `cost(mode, i)`. */
function run(
  choice: MicroBatchChoice,
  tokens: number,
  steps: number,
  cost: (mode: MicroBatchMode, i: number) => number,
): MicroBatchMode[] {
  const picked: MicroBatchMode[] = [];
  for (let i = 0; i < steps; i++) {
    const mode = choice.pick(tokens);
    picked.push(mode);
    choice.record(tokens, mode, cost(mode, i));
  }
  return picked;
}

describe("step shapes", () => {
  it("are the runs of consecutive sequence ids; only a run of two or more leaves a choice", () => {
    expect(stepShape([0, 1, 2, 3])).toBe("4");
    expect(stepShape([0, 1, 3])).toBe("2+1");
    expect(stepShape([0, 2, 3, 4, 7])).toBe("1+3+1");
    expect(stepShape([5])).toBe("1");
    expect(stepShape([0, 2])).toBe("1+1");
    expect([4, "2+1", "1+3+1"].map(hasChoice)).toEqual([true, true, true]);
    expect([1, "1", "1+1", 0].map(hasChoice)).toEqual([false, false, false, false]);
    // A shape with no choice is always together, learnt or fixed.
    expect(new MicroBatchChoice({ fixed: "apart" }).pick("1+1")).toBe("together");
  });
});

describe("MicroBatchChoice", () => {
  it("tries both ways, then decodes apart where apart is faster", () => {
    const choice = new MicroBatchChoice({ explore: 2, recheckEvery: 1000, farRecheckEvery: 1000 });
    const picked = run(choice, 2, 10, (mode) => (mode === "together" ? 24.6 : 18));
    expect(picked).toEqual([T, A, T, A, A, A, A, A, A, A]);
    expect(choice.medians(2)).toEqual({ together: 24.6, apart: 18 });
  });

  it("keeps one micro-batch where that is faster", () => {
    const choice = new MicroBatchChoice({ explore: 2, farRecheckEvery: 1000 });
    const picked = run(choice, 4, 10, (mode) => (mode === "together" ? 21.5 : 37.6));
    expect(picked).toEqual([T, A, T, A, T, T, T, T, T, T]);
  });

  it("learns each step size on its own", () => {
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 1000, farRecheckEvery: 1000 });
    run(choice, 2, 6, (mode) => (mode === "together" ? 25 : 18));
    run(choice, 4, 6, (mode) => (mode === "together" ? 21 : 36));
    expect(choice.pick(2)).toBe("apart");
    expect(choice.pick(4)).toBe("together");
  });

  it("one slow step (the first of a shape, a garbage collection) does not decide", () => {
    // together's first step 80 ms, then 21.5; apart 37.6: together wins on its median.
    const cold = new MicroBatchChoice({ explore: 3, farRecheckEvery: 1000 });
    const picked = run(cold, 4, 12, (mode, i) => (mode === "together" ? (i === 0 ? 80 : 21.5) : 37.6));
    expect(picked.slice(6)).toEqual(Array(6).fill(T));
    // apart 18 but for one 300 ms step among its first three: apart still wins.
    const spike = new MicroBatchChoice({ explore: 3, farRecheckEvery: 1000 });
    const got = run(spike, 2, 12, (mode, i) => (mode === "together" ? 24.6 : i === 3 ? 300 : 18));
    expect(got.slice(6)).toEqual(Array(6).fill(A));
  });

  it("tries the other way every recheckEvery steps while close, every farRecheckEvery when far", () => {
    const close = new MicroBatchChoice({ explore: 1, recheckEvery: 4, farRecheckEvery: 100 });
    // 21.5 against 24: within 1.2 times. Steps 3, 7, 11, … of the size go the other way.
    const near = run(close, 4, 20, (mode) => (mode === "together" ? 21.5 : 24));
    expect(near).toEqual([T, A, T, A, T, T, T, A, T, T, T, A, T, T, T, A, T, T, T, A]);
    const far = new MicroBatchChoice({ explore: 1, recheckEvery: 4, farRecheckEvery: 100 });
    // 21.5 against 37.6: 1.75 times, far. Only step 99 (and exploring step 1) go apart.
    const picked = run(far, 4, 150, (mode) => (mode === "together" ? 21.5 : 37.6));
    expect(picked.flatMap((m, i) => (m === "apart" ? [i] : []))).toEqual([1, 99]);
  });

  it("a recheck faster than the way in use is taken at once, and handed back if it does not hold", () => {
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 4 });
    let apart = 24;
    const before = run(choice, 2, 4, (mode) => (mode === "together" ? 21.5 : apart));
    expect(before).toEqual([T, A, T, A]);
    // Apart gets faster (say the context grew): the recheck at step 3 found 24, the next one
    // (step 7) finds 15 and apart is used from step 8 on.
    apart = 15;
    const after = run(choice, 2, 6, (mode) => (mode === "together" ? 21.5 : apart));
    expect(after).toEqual([T, T, T, A, A, A]);
    // It was one fast step: apart's own steps now cost 30, and together comes back.
    apart = 30;
    const back = run(choice, 2, 6, (mode) => (mode === "together" ? 21.5 : apart));
    // Its median passes together's after three such steps (step 15 is a recheck again).
    expect(back).toEqual([A, A, A, T, T, A]);
  });

  it("decodes a single token together whatever is set, and ignores what cannot be a cost", () => {
    expect(new MicroBatchChoice({ fixed: "apart" }).pick(1)).toBe("together");
    expect(new MicroBatchChoice().pick(1)).toBe("together");
    const choice = new MicroBatchChoice({ explore: 1 });
    choice.record(2, "apart", 18);
    choice.record(2, "apart", Number.NaN);
    choice.record(2, "apart", -1);
    choice.record(2, "apart", Number.POSITIVE_INFINITY);
    expect(choice.medians(2).apart).toBe(18);
  });

  it("a fixed setting is obeyed and learns nothing", () => {
    const choice = new MicroBatchChoice({ fixed: "apart" });
    expect(run(choice, 3, 5, () => 1)).toEqual(Array(5).fill(A));
    expect(choice.medians(3).apart).toBeNaN();
    expect(microBatchSetting({ MACARON_ENGINE_MICRO_BATCHES: "together" })).toBe("together");
    expect(microBatchSetting({ MACARON_ENGINE_MICRO_BATCHES: "apart" })).toBe("apart");
    expect(microBatchSetting({ MACARON_ENGINE_MICRO_BATCHES: "fast" })).toBeNull();
    expect(microBatchSetting({})).toBeNull();
  });
});
