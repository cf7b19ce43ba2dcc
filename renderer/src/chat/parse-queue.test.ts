/** The parse queue: jobs run in order, one per task (a timer turn between two), and cancel. */
import { describe, expect, it } from "vitest";
import { enqueueParse } from "./parse-queue";

/** Resolves after the timer queue has had `turns` more turns. */
const turns = (n: number) =>
  new Promise<void>((done) => {
    const step = (left: number) => (left === 0 ? done() : setTimeout(() => step(left - 1), 0));
    step(n);
  });

describe("enqueueParse", () => {
  it("runs jobs in the order queued, never two in the same task", async () => {
    const ran: string[] = [];
    let task = 0;
    const ticker = setInterval(() => (task += 1), 0);
    const tasks: number[] = [];
    for (const name of ["a", "b", "c"]) {
      enqueueParse(() => {
        ran.push(name);
        tasks.push(task);
      });
    }
    expect(ran).toEqual([]);
    await turns(10);
    clearInterval(ticker);
    expect(ran).toEqual(["a", "b", "c"]);
    // Each job ran in a later task than the one before (a microtask chain would share one).
    expect(new Set(tasks).size).toBe(3);
  });

  it("a cancelled job never runs; the ones after it still do", async () => {
    const ran: string[] = [];
    enqueueParse(() => ran.push("first"));
    const cancel = enqueueParse(() => ran.push("cancelled"));
    enqueueParse(() => ran.push("last"));
    cancel();
    await turns(10);
    expect(ran).toEqual(["first", "last"]);
  });
});
