/**
 * The decode barrier's rules on a stand-in for node-llama-cpp's internal `_decodeTokens` that
 * records what it was handed and returns when the test says: tokens of all sequences in use go
 * together, in sequence-id order, on a later turn of the event loop; a sequence being decoded is
 * waited for, one busy elsewhere only `waitMs`. What these rules buy on the real engine (one
 * micro-batch per step, no request starved of the context lock) is measured in bench/README.md
 * "parallel".
 */
import type { LlamaContext } from "node-llama-cpp";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { alignDecodes } from "./decode-barrier";
import { MicroBatchChoice } from "./micro-batches";

interface Pending {
  sequenceId: number;
  finish: () => void;
}

function fakeContext() {
  const handed: number[][] = [];
  const pending: Pending[] = [];
  let batch: number[] | null = null;
  const context = {
    _decodeTokens(request: { sequenceId: number; tokens: readonly number[] }): Promise<string> {
      // Calls in one synchronous run form one batch, as node-llama-cpp's dispatcher takes them.
      if (!batch) {
        batch = [];
        handed.push(batch);
        queueMicrotask(() => (batch = null));
      }
      batch.push(request.sequenceId);
      return new Promise((resolve) =>
        pending.push({
          sequenceId: request.sequenceId,
          finish: () => resolve(`token ${request.sequenceId}`),
        }),
      );
    },
  };
  return { context, handed, pending };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate"] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** Runs `steps` with performance.now() reading `clock.ms`, which the steps set. */
async function withClock(steps: (clock: { ms: number }) => Promise<void>): Promise<void> {
  const clock = { ms: 0 };
  const now = vi.spyOn(performance, "now").mockImplementation(() => clock.ms);
  try {
    await steps(clock);
  } finally {
    now.mockRestore();
  }
}
describe("alignDecodes", () => {
  it("hands every active sequence's token over together, in sequence order, on a later turn", async () => {
    const { context, handed } = fakeContext();
    alignDecodes(context as unknown as LlamaContext, () => 4, 2);
    const decode = (request: { sequenceId: number; tokens?: number[] }) =>
      context._decodeTokens({ tokens: [7], ...request });
    for (const id of [2, 0, 3]) void decode({ sequenceId: id });
    expect(handed).toEqual([]);
    void decode({ sequenceId: 1 });
    // Not in the arrival's own run: node-llama-cpp's dispatcher, still holding the context lock
    // after a batch, would find the tokens queued and go on without letting waiters in.
    await Promise.resolve();
    expect(handed).toEqual([]);
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[0, 1, 2, 3]]);
  });

  it("a sequence being decoded is waited for however long it takes; then all go together", async () => {
    const { context, handed, pending } = fakeContext();
    alignDecodes(context as unknown as LlamaContext, () => 2, 2);
    const decode = (request: { sequenceId: number; tokens?: number[] }) =>
      context._decodeTokens({ tokens: [7], ...request });
    // Sequence 1 alone at first (sequence 0 is still preparing): its token goes after waitMs.
    const first = decode({ sequenceId: 1 });
    await vi.advanceTimersByTimeAsync(2);
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[1]]);
    // Sequence 0 arrives while 1 is being decoded: it waits for 1, not for a timer.
    void decode({ sequenceId: 0 });
    await vi.advanceTimersByTimeAsync(100);
    expect(handed).toEqual([[1]]);
    pending.find((p) => p.sequenceId === 1)!.finish();
    expect(await first).toBe("token 1");
    void decode({ sequenceId: 1 });
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[1], [0, 1]]);
  });

  it("a sequence in use but neither queued nor decoding holds the others back only waitMs", async () => {
    const { context, handed } = fakeContext();
    alignDecodes(context as unknown as LlamaContext, () => 3, 5);
    const decode = (request: { sequenceId: number; tokens?: number[] }) =>
      context._decodeTokens({ tokens: [7], ...request });
    void decode({ sequenceId: 2 });
    void decode({ sequenceId: 0 });
    await vi.advanceTimersByTimeAsync(4);
    expect(handed).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[0, 2]]);
  });

  it("a prompt being decoded does not stop the running streams: they go after waitMs", async () => {
    const { context, handed, pending } = fakeContext();
    alignDecodes(context as unknown as LlamaContext, () => 2, 2);
    const decode = (request: { sequenceId: number; tokens?: number[] }) =>
      context._decodeTokens({ tokens: [7], ...request });
    // Sequence 1 joins with a 600-token prompt; sequence 0 is generating.
    void decode({ sequenceId: 1, tokens: Array.from({ length: 600 }, (_, i) => i) });
    await vi.advanceTimersByTimeAsync(2);
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[1]]);
    void decode({ sequenceId: 0 });
    await vi.advanceTimersByTimeAsync(2);
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[1], [0]]);
    expect(pending.map((p) => p.sequenceId)).toEqual([1, 0]);
  });

  it("a step decoded faster apart goes in descending order; a step with a prompt never does", async () => {
    const { context, handed, pending } = fakeContext();
    alignDecodes(context as unknown as LlamaContext, () => 2, 2, new MicroBatchChoice({ fixed: "apart" }));
    const decode = (request: { sequenceId: number; tokens?: number[] }) =>
      context._decodeTokens({ tokens: [7], ...request });
    void decode({ sequenceId: 0 });
    void decode({ sequenceId: 1 });
    await vi.advanceTimersToNextTimerAsync();
    // Descending ids: llama.cpp's split_equal then makes one micro-batch per sequence.
    expect(handed).toEqual([[1, 0]]);
    for (const p of pending.splice(0)) p.finish();
    void decode({ sequenceId: 1, tokens: [1, 2, 3] });
    void decode({ sequenceId: 0 });
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it("learns from the time each step takes until its last token is back", async () => {
    const { context, handed, pending } = fakeContext();
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 1000, farRecheckEvery: 1000 });
    alignDecodes(context as unknown as LlamaContext, () => 2, 2, choice);
    await withClock(async (clock) => {
      // Together: the first token back after 5 ms, the last after 25; apart: 4 and 18 (as the
      // 2-token steps of the bench model on one machine). The last one is the step's cost.
      for (let i = 0; i < 3; i++) {
        const started = clock.ms;
        void context._decodeTokens({ sequenceId: 0, tokens: [7] });
        void context._decodeTokens({ sequenceId: 1, tokens: [7] });
        await vi.advanceTimersToNextTimerAsync();
        const apart = handed[handed.length - 1]![0] === 1;
        const [first, last] = pending.splice(0);
        clock.ms = started + (apart ? 4 : 5);
        first!.finish();
        await vi.advanceTimersByTimeAsync(0);
        clock.ms = started + (apart ? 18 : 25);
        last!.finish();
        await vi.advanceTimersByTimeAsync(0);
      }
    });
    expect(handed).toEqual([
      [0, 1],
      [1, 0],
      [1, 0],
    ]);
    expect(choice.medians(2)).toEqual({ together: 25, apart: 18 });
  });

  it("steps of ids that are all apart, or beside a queued prompt chunk, are neither chosen nor timed", async () => {
    const { context, handed, pending } = fakeContext();
    const choice = new MicroBatchChoice({ explore: 1 });
    alignDecodes(context as unknown as LlamaContext, () => 2, 2, choice);
    // Sequences 0 and 2 (1 idle): ascending order already makes two micro-batches.
    void context._decodeTokens({ sequenceId: 2, tokens: [7] });
    void context._decodeTokens({ sequenceId: 0, tokens: [7] });
    await vi.advanceTimersToNextTimerAsync();
    for (const p of pending.splice(0)) p.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(choice.medians(2)).toEqual({ together: NaN, apart: NaN });
    // Consecutive, but a prompt's remaining chunk is still queued: decoded with the step.
    const queued = context as unknown as { _queuedDecodes: unknown[] };
    queued._queuedDecodes = ["a prompt's next chunk"];
    const decode = context._decodeTokens.bind(context);
    context._decodeTokens = (request) => {
      queued._queuedDecodes.push(request);
      return decode(request);
    };
    void context._decodeTokens({ sequenceId: 1, tokens: [7] });
    void context._decodeTokens({ sequenceId: 0, tokens: [7] });
    await vi.advanceTimersToNextTimerAsync();
    for (const p of pending.splice(0)) p.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(handed).toEqual([
      [0, 2],
      [0, 1],
    ]);
    expect(choice.medians(2)).toEqual({ together: NaN, apart: NaN });
  });

  it("a step with a gap in its ids is learnt as its own shape: 0, 1 and 3 go apart where that is faster", async () => {
    const { context, handed, pending } = fakeContext();
    const choice = new MicroBatchChoice({ explore: 1, recheckEvery: 1000, farRecheckEvery: 1000 });
    alignDecodes(context as unknown as LlamaContext, () => 3, 2, choice);
    await withClock(async (clock) => {
      // Ascending, llama.cpp makes {0, 1} and {3}: 25 + 9 ms; apart, three of 1: 27 ms.
      for (let i = 0; i < 3; i++) {
        const started = clock.ms;
        for (const id of [3, 0, 1]) void context._decodeTokens({ sequenceId: id, tokens: [7] });
        await vi.advanceTimersToNextTimerAsync();
        const apart = handed[handed.length - 1]![0] === 3;
        clock.ms = started + (apart ? 27 : 34);
        for (const p of pending.splice(0)) p.finish();
        await vi.advanceTimersByTimeAsync(0);
      }
    });
    expect(handed).toEqual([
      [0, 1, 3],
      [3, 1, 0],
      [3, 1, 0],
    ]);
    expect(choice.medians("2+1")).toEqual({ together: 34, apart: 27 });
    // A step of 0, 1 and 2 is another shape, not decided by this one.
    expect(choice.medians(3)).toEqual({ together: NaN, apart: NaN });
  });

  it("a decode that fails fails its own request only; the barrier goes on", async () => {
    const { context, handed, pending } = fakeContext();
    const decode = context._decodeTokens.bind(context);
    let calls = 0;
    context._decodeTokens = (request) => {
      calls++;
      if (calls === 1) return Promise.reject(new Error("decode failed"));
      if (calls === 2) throw new Error("thrown at once");
      return decode(request);
    };
    alignDecodes(context as unknown as LlamaContext, () => 3, 2, new MicroBatchChoice({ fixed: "together" }));
    const results = [0, 1, 2].map((id) =>
      context._decodeTokens({ sequenceId: id, tokens: [7] }).then(
        (value) => value,
        (error: Error) => error.message,
      ),
    );
    await vi.advanceTimersToNextTimerAsync();
    pending.find((p) => p.sequenceId === 2)!.finish();
    expect(await Promise.all(results)).toEqual(["decode failed", "thrown at once", "token 2"]);
    // The next step goes as usual.
    for (const id of [0, 1, 2]) void context._decodeTokens({ sequenceId: id, tokens: [7] });
    await vi.advanceTimersToNextTimerAsync();
    expect(handed).toEqual([[2], [0, 1, 2]]);
  });
});
