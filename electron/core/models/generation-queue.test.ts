import { describe, expect, it } from "vitest";
import { GenerationQueue } from "./generation-queue";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("GenerationQueue", () => {
  it("runs jobs one at a time in arrival order", async () => {
    const queue = new GenerationQueue();
    const order: string[] = [];
    const gate = deferred();
    const first = queue.run(new AbortController().signal, async () => {
      order.push("first:start");
      await gate.promise;
      order.push("first:end");
    });
    const second = queue.run(new AbortController().signal, () => Promise.resolve(void order.push("second")));
    await Promise.resolve();
    expect(order).toEqual(["first:start"]);
    gate.resolve();
    await Promise.all([first, second]);
    expect(order).toEqual(["first:start", "first:end", "second"]);
  });

  it("keeps going after a failed job", async () => {
    const queue = new GenerationQueue();
    const failed = queue.run(new AbortController().signal, () => Promise.reject(new Error("boom")));
    await expect(failed).rejects.toThrow("boom");
    await expect(queue.run(new AbortController().signal, () => Promise.resolve(42))).resolves.toBe(42);
  });

  it("never starts a job whose client left while it waited", async () => {
    const queue = new GenerationQueue();
    const gate = deferred();
    const first = queue.run(new AbortController().signal, () => gate.promise);
    const controller = new AbortController();
    let ran = false;
    const second = queue.run(controller.signal, () => Promise.resolve(void (ran = true)));
    controller.abort();
    gate.resolve();
    await first;
    await expect(second).rejects.toMatchObject({ code: "aborted" });
    expect(ran).toBe(false);
  });

  it("refuses with busy when too many wait", async () => {
    const queue = new GenerationQueue(1);
    const gate = deferred();
    const first = queue.run(new AbortController().signal, () => gate.promise);
    const second = queue.run(new AbortController().signal, () => Promise.resolve(2));
    await expect(queue.run(new AbortController().signal, () => Promise.resolve(1))).rejects.toMatchObject({
      code: "busy",
    });
    gate.resolve();
    await first;
    expect(await second).toBe(2);
  });

  it("runs up to `limit` jobs at once, the rest in arrival order as places free up", async () => {
    const queue = new GenerationQueue();
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const jobs = gates.map((gate, i) =>
      queue.run(new AbortController().signal, () => (started.push(i), gate.promise), 2),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    gates[1]!.resolve();
    await jobs[1];
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    gates[2]!.resolve();
    await Promise.all(jobs);
  });
});
