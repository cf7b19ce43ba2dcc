import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LlamaContext } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { testDir } from "../../testing/core/temp-dir";
import {
  decodeSummary,
  decodeTraceFile,
  DecodeTrace,
  IDLE_GAP_MS,
  parseDecodeTrace,
  traceDecodes,
  type DecodeEntry,
} from "./decode-trace";

/** `n` consecutive decodes of `tokens` tokens from `at`: each `decode` ms, `gap` ms apart. */
function steps(at: number, n: number, tokens: number, decode: number, gap: number): DecodeEntry[] {
  return Array.from({ length: n }, (_, i) => {
    const start = at + i * (decode + gap);
    return { start, end: start + decode, tokens };
  });
}

describe("decode trace", () => {
  it("is on only with a file named", () => {
    expect(decodeTraceFile({})).toBeNull();
    expect(decodeTraceFile({ MACARON_ENGINE_DECODE_TRACE: "" })).toBeNull();
    expect(decodeTraceFile({ MACARON_ENGINE_DECODE_TRACE: "/tmp/t.txt" })).toBe("/tmp/t.txt");
  });

  it("summarizes each batch size: its decodes, and the gaps between two of that size only", () => {
    const prompt: DecodeEntry = { start: 0, end: 300, tokens: 120 };
    const four = steps(301, 5, 4, 20, 1);
    // One generation left: 1-token steps, 0.5 ms apart, after a 3 ms switch.
    const one = steps(four.at(-1)!.end + 3, 3, 1, 10, 0.5);
    // The next round, after the engine was idle: the gap to it is not a step's.
    const later = steps(one.at(-1)!.end + IDLE_GAP_MS + 1, 2, 4, 30, 2);
    const summary = decodeSummary([prompt, ...four, ...one, ...later]);
    expect(summary.map((s) => [s.tokens, s.decodes, s.gaps])).toEqual([
      [1, 3, 2],
      [4, 7, 5],
      [120, 1, 0],
    ]);
    const byTokens = new Map(summary.map((s) => [s.tokens, s]));
    expect(byTokens.get(1)!.decodeMedianMs).toBeCloseTo(10);
    expect(byTokens.get(1)!.gapMeanMs).toBeCloseTo(0.5);
    // Five 20 ms decodes and two of 30: median 20, mean 160 / 7.
    expect(byTokens.get(4)!.decodeMedianMs).toBeCloseTo(20);
    expect(byTokens.get(4)!.decodeMeanMs).toBeCloseTo(160 / 7);
    // Four 1 ms gaps and one of 2 ms: median 1, mean 1.2.
    expect(byTokens.get(4)!.gapMedianMs).toBeCloseTo(1);
    expect(byTokens.get(4)!.gapMeanMs).toBeCloseTo(1.2);
    expect(byTokens.get(120)!.gapMedianMs).toBeNaN();
    // No sampling times in these entries.
    expect(byTokens.get(4)!.sampleMedianMs).toBeNaN();
  });

  it("splits each gap at the last sampled token of the decode before it", () => {
    // Four steps 1 ms apart; their samples back 0.6, 0.7, 0.8 ms after each decode's end.
    const four = steps(0, 4, 4, 20, 1).map((e, i) => (i < 3 ? { ...e, sampled: e.end + 0.6 + 0.1 * i } : e));
    const s = decodeSummary(four).find((x) => x.tokens === 4)!;
    expect(s.gaps).toBe(3);
    expect(s.sampleMedianMs).toBeCloseTo(0.7);
    expect(s.sampleMeanMs).toBeCloseTo(0.7);
  });

  it("writes its lines 512 at a time and on flush, and reads them back", () => {
    const file = join(testDir(), "trace.txt");
    const trace = new DecodeTrace(file);
    const entries = steps(1_733_000_000_000.125, 600, 4, 19.5, 0.75);
    for (const entry of entries.slice(0, 511)) trace.record(entry);
    expect(() => readFileSync(file, "utf8")).toThrow();
    trace.record(entries[511]!);
    expect(parseDecodeTrace(readFileSync(file, "utf8"))).toHaveLength(512);
    for (const entry of entries.slice(512)) trace.record(entry);
    // A writer's entry still open (its samples may come back) is recorded by the flush.
    trace.holdOpen(() => trace.record({ ...entries[0]!, start: 1, end: 2, sampled: 2.25 }));
    trace.flush();
    const back = parseDecodeTrace(readFileSync(file, "utf8"));
    expect(back).toHaveLength(601);
    expect(back.at(-1)).toEqual({ start: 1, end: 2, tokens: 4, sampled: 2.25 });
    // Epoch milliseconds keep the microsecond.
    for (const [i, entry] of back.slice(0, 600).entries()) {
      expect(entry.tokens).toBe(4);
      expect(entry.start).toBeCloseTo(entries[i]!.start, 3);
      expect(entry.end).toBeCloseTo(entries[i]!.end, 3);
    }
  });

  it("wraps a context's decodes and samples: results unchanged, every decode written once", async () => {
    /** The addon's context as node-llama-cpp holds it: methods read-only on the prototype. */
    class Native {
      declare initBatch: (size: number) => void;
      declare decodeBatch: () => Promise<void>;
      declare sampleToken: (index: number, sampler: object) => Promise<number>;
    }
    const method = (value: unknown) => ({ value, writable: false, configurable: false });
    Object.defineProperties(Native.prototype, {
      initBatch: method(function initBatch(this: Native) {
        return undefined;
      }),
      decodeBatch: method(function decodeBatch(this: Native) {
        return this instanceof Native ? Promise.resolve() : Promise.reject(new Error("wrong this"));
      }),
      sampleToken: method(function sampleToken(this: Native, index: number) {
        if (!(this instanceof Native)) return Promise.reject(new Error("wrong this"));
        return index < 0 ? Promise.reject(new Error("no logits there")) : Promise.resolve(index + 100);
      }),
    });
    const native = new Native();
    const disposed: (() => void)[] = [];
    const context = { _ctx: native, onDispose: { createListener: (fn: () => void) => disposed.push(fn) } };
    const file = join(testDir(), "trace.txt");
    const trace = new DecodeTrace(file);
    traceDecodes(context as unknown as LlamaContext, trace);
    // More than one flush's worth (512): each flush closes the open entry and goes on.
    for (let step = 0; step < 1200; step++) {
      native.initBatch(4);
      await native.decodeBatch();
      const tokens = await Promise.all([0, 1, 2, 3].map((i) => native.sampleToken(i, {})));
      expect(tokens).toEqual([100, 101, 102, 103]);
      if (step % 300 === 0) await expect(native.sampleToken(-1, {})).rejects.toThrow("no logits there");
    }
    // Disposed with a decode still running: that one is written when it ends.
    native.initBatch(2);
    const running = native.decodeBatch();
    disposed.forEach((fn) => fn());
    await running;
    trace.flush();
    // A second flush after the context's disposal writes nothing again.
    trace.flush();
    const all = parseDecodeTrace(readFileSync(file, "utf8"));
    expect(all).toHaveLength(1201);
    expect(all.at(-1)).toMatchObject({ tokens: 2 });
    expect(all.at(-1)!.sampled).toBeUndefined();
    const entries = all.slice(0, 1200);
    for (const [i, e] of entries.entries()) {
      expect(e.tokens).toBe(4);
      expect(e.sampled).toBeGreaterThanOrEqual(e.end);
      if (i > 0) expect(e.start).toBeGreaterThanOrEqual(entries[i - 1]!.sampled!);
    }
  });

  it("skips lines that are not entries", () => {
    expect(parseDecodeTrace("1 2 3\n\ngarbage\n4 5 0\n6 7 2.5\n8 9 1\n8 9 1 9.5\n8 9 1 x\n")).toEqual([
      { start: 1, end: 2, tokens: 3 },
      { start: 8, end: 9, tokens: 1 },
      { start: 8, end: 9, tokens: 1, sampled: 9.5 },
      { start: 8, end: 9, tokens: 1 },
    ]);
  });
});
