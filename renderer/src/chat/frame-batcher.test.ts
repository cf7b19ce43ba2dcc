import { describe, expect, it } from "vitest";
import type { Delta } from "./chat-logic";
import { FrameBatcher } from "./frame-batcher";

function manualSchedule() {
  const queue: Array<() => void> = [];
  return {
    queue,
    schedule: (cb: () => void) => {
      queue.push(cb);
      return () => queue.splice(queue.indexOf(cb), 1);
    },
  };
}

const d = (delta: string): Delta => ({ conversationId: "c", messageId: "m", delta });

describe("FrameBatcher", () => {
  it("applies everything pushed before the frame as one batch", () => {
    const batches: string[][] = [];
    const { queue, schedule } = manualSchedule();
    const batcher = new FrameBatcher((b) => batches.push(b.map((x) => x.delta)), schedule);
    batcher.push(d("a"));
    batcher.push(d("b"));
    expect(queue).toHaveLength(1);
    queue.shift()!();
    batcher.push(d("c"));
    queue.shift()!();
    expect(batches).toEqual([["a", "b"], ["c"]]);
  });

  it("flush applies at once and cancels the scheduled frame", () => {
    const batches: string[][] = [];
    const { queue, schedule } = manualSchedule();
    const batcher = new FrameBatcher((b) => batches.push(b.map((x) => x.delta)), schedule);
    batcher.push(d("a"));
    batcher.flush();
    expect(batches).toEqual([["a"]]);
    expect(queue).toHaveLength(0);
    batcher.flush();
    expect(batches).toHaveLength(1);
  });

  it("works with a scheduler that runs the callback synchronously", () => {
    const seen: string[] = [];
    const batcher = new FrameBatcher(
      (b) => seen.push(...b.map((x) => x.delta)),
      (cb) => {
        cb();
        return () => {};
      },
    );
    batcher.push(d("a"));
    batcher.push(d("b"));
    expect(seen).toEqual(["a", "b"]);
  });

  it("drops pending deltas on dispose", () => {
    const seen: string[] = [];
    const { queue, schedule } = manualSchedule();
    const batcher = new FrameBatcher((b) => seen.push(...b.map((x) => x.delta)), schedule);
    batcher.push(d("a"));
    batcher.dispose();
    expect(queue).toHaveLength(0);
    batcher.flush();
    expect(seen).toEqual([]);
  });
});
