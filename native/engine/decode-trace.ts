import { appendFileSync } from "node:fs";
import type { LlamaContext } from "node-llama-cpp";

/**
 * `MACARON_ENGINE_DECODE_TRACE=<file>`: the engine writes one line per decode of its contexts to
 * `file`: when it started and when its end reached JS (ms since the epoch with microsecond
 * resolution, `performance.timeOrigin + performance.now()`, which another process can compare
 * with its own clock to about a millisecond: enough to tell which of its phases a decode fell
 * in), how many tokens the batch held, and when the last token sampled from its logits came back
 * to JS (absent when none was: a prompt chunk without logits). Off unless set.
 * `npm run bench -- parallel` sets it to see where a step's time goes (decodeSummary): the
 * decode itself, the sampling of its tokens, or the engine's other work between two decodes
 * (node-llama-cpp's and LlamaChat's handling of each token, decode-barrier.ts's hand-over of the
 * next batch, the token messages to core, whatever else the event loop runs meanwhile);
 * llama-server runs its loop between two decodes in C++.
 *
 * Lines are kept in memory and appended 512 at a time (one synchronous append in every 512th
 * step) and when the process exits or is stopped with SIGTERM; a process killed otherwise loses
 * the last lines. While a context grows, the old and the new one both write here. Recording
 * wraps the context's native `initBatch`, `decodeBatch` and `sampleToken` (node-llama-cpp
 * 3.21.1's internal `_ctx`: LlamaContext.dispatchPendingBatch calls `initBatch(n)`, awaits
 * `decodeBatch()`, then the samples of the batch's logits, all under the context's lock), as
 * decode-barrier.ts wraps `_decodeTokens`.
 */
export function decodeTraceFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const file = env.MACARON_ENGINE_DECODE_TRACE;
  return file && file.length > 0 ? file : null;
}

/** One decode: start and end (ms), the tokens in its batch, its last sampled token back (ms). */
export interface DecodeEntry {
  start: number;
  end: number;
  tokens: number;
  sampled?: number;
}

const FLUSH_EVERY = 512;

/** The lines of one trace file; `flush` appends what is pending. */
export class DecodeTrace {
  private pending: string[] = [];
  /** Writers holding an entry not recorded yet (a decode whose samples may still come back). */
  private readonly open = new Set<() => void>();
  private flushing = false;

  constructor(readonly file: string) {}

  record(entry: DecodeEntry): void {
    const sampled = entry.sampled === undefined ? "" : ` ${entry.sampled.toFixed(3)}`;
    this.pending.push(`${entry.start.toFixed(3)} ${entry.end.toFixed(3)} ${entry.tokens}${sampled}\n`);
    if (this.pending.length >= FLUSH_EVERY) this.flush();
  }

  /**
   * `close` records what its writer holds (and lets go of it); flush calls it first. A flush
   * closes every writer's entry, so one whose samples are still out is written without them.
   * The returned function unregisters the writer.
   */
  holdOpen(close: () => void): () => void {
    this.open.add(close);
    return () => this.open.delete(close);
  }

  flush(): void {
    // A writer's close records, which may flush again: the entries go to `pending` either way.
    if (this.flushing) return;
    this.flushing = true;
    try {
      for (const close of this.open) close();
    } finally {
      this.flushing = false;
    }
    if (this.pending.length === 0) return;
    const lines = this.pending.join("");
    this.pending = [];
    try {
      appendFileSync(this.file, lines);
    } catch {
      // A trace that cannot be written is dropped: it must never fail a decode.
    }
  }
}

let shared: DecodeTrace | null = null;

/**
 * The process's trace for `file`, flushed when the process exits, and on SIGTERM (a benchmark
 * stops the server's process group with it), after which the signal is raised again so that
 * the process ends as it would have without the trace.
 */
export function processTrace(file: string): DecodeTrace {
  if (shared?.file === file) return shared;
  shared?.flush();
  const trace = new DecodeTrace(file);
  shared = trace;
  process.once("exit", () => trace.flush());
  process.once("SIGTERM", () => {
    trace.flush();
    process.kill(process.pid, "SIGTERM");
  });
  return trace;
}

/** node-llama-cpp 3.21.1's native context, as LlamaContext holds it (not in its typings). */
interface NativeBatching {
  initBatch(size: number): unknown;
  decodeBatch(): Promise<unknown>;
  sampleToken(...args: unknown[]): Promise<unknown>;
}

const traced = new WeakSet<object>();

/**
 * Record every decode of `context` into `trace`. A decode's line is written when the next decode
 * starts (or the trace is flushed, or the context disposed), once the tokens sampled from its
 * logits are back: node-llama-cpp samples each with the native `sampleToken` (a job on libuv's
 * thread pool) after the decode returns, and the next step's tokens are those.
 */
export function traceDecodes(context: LlamaContext, trace: DecodeTrace): void {
  const native = (context as unknown as { _ctx: NativeBatching })._ctx;
  // Once per context: wrapped twice, every decode would be written twice.
  if (traced.has(native)) return;
  traced.add(native);
  const init = native.initBatch.bind(native);
  const decode = native.decodeBatch.bind(native);
  const sample = native.sampleToken.bind(native);
  let tokens = 0;
  /** The last decode that ended, not recorded yet: its samples may still come back. */
  let last: DecodeEntry | null = null;
  const close = () => {
    const entry = last;
    last = null;
    if (entry) trace.record(entry);
  };
  const release = trace.holdOpen(close);
  let released = false;
  // A disposed context decodes no more: its last entry goes now, and the trace lets go of it (a
  // decode still running then is written when it ends).
  context.onDispose.createListener(() => {
    close();
    release();
    released = true;
  });
  // The addon's methods are read-only on its prototype: shadowed by own properties.
  const own = <K extends keyof NativeBatching>(key: K, value: NativeBatching[K]) =>
    Object.defineProperty(native, key, { value, writable: true, configurable: true });
  own("initBatch", (size) => {
    tokens = size;
    return init(size);
  });
  own("decodeBatch", async () => {
    close();
    const start = performance.timeOrigin + performance.now();
    const size = tokens;
    // A decode without its initBatch would be written with 0 tokens, which parsing drops.
    tokens = 0;
    const result = await decode();
    last = { start, end: performance.timeOrigin + performance.now(), tokens: size };
    if (released) close();
    return result;
  });
  // The logits sampled are the last decode's (the next one overwrites them).
  own("sampleToken", (...args) => {
    const entry = last;
    return sample(...args).then((token) => {
      if (entry) entry.sampled = performance.timeOrigin + performance.now();
      return token;
    });
  });
}

export function parseDecodeTrace(text: string): DecodeEntry[] {
  const entries: DecodeEntry[] = [];
  for (const line of text.split("\n")) {
    const [start, end, tokens, sampled] = line.split(" ").map(Number);
    if (Number.isFinite(start) && Number.isFinite(end) && Number.isInteger(tokens) && tokens! > 0)
      entries.push({
        start: start!,
        end: end!,
        tokens: tokens!,
        ...(Number.isFinite(sampled) ? { sampled: sampled! } : {}),
      });
  }
  return entries;
}

/** Decodes of one batch size (tokens), and the engine's time between two consecutive ones. */
export interface StepSummary {
  tokens: number;
  decodes: number;
  decodeMedianMs: number;
  decodeMeanMs: number;
  /** Between the end of one decode and the start of the next, both of this size. */
  gaps: number;
  gapMedianMs: number;
  gapMeanMs: number;
  /**
   * Of those gaps, the part until the last token sampled from the first decode came back to JS
   * (the rest is node-llama-cpp's, LlamaChat's and the engine's own handling of the tokens until
   * the next batch starts). NaN where the trace has no sampling times.
   */
  sampleMedianMs: number;
  sampleMeanMs: number;
}

/**
 * A gap longer than this is not the engine's work between two steps of one generation (the
 * engine was idle: a round of requests had ended, the next had not come).
 */
export const IDLE_GAP_MS = 50;

/** The median of `values` (the mean of the middle two for an even count), NaN for none. */
export const median = (values: readonly number[]): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const mean = (values: number[]): number =>
  values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;

/**
 * Per batch size: the decodes' durations and the gaps between consecutive decodes of that size
 * (entries in the order they were written: a decode's when the next decode of its context started,
 * so a context disposed while another grows may write its last one late; gaps over IDLE_GAP_MS
 * or negative are left out). Generation steps of n
 * parallel streams are the n-token batches; prompts make the larger ones.
 */
export function decodeSummary(entries: readonly DecodeEntry[]): StepSummary[] {
  const sizes = new Map<number, { durations: number[]; gaps: number[]; samples: number[] }>();
  entries.forEach((entry, i) => {
    const size = sizes.get(entry.tokens) ?? { durations: [], gaps: [], samples: [] };
    sizes.set(entry.tokens, size);
    size.durations.push(entry.end - entry.start);
    const before = entries[i - 1];
    if (before?.tokens === entry.tokens) {
      const gap = entry.start - before.end;
      if (gap >= 0 && gap <= IDLE_GAP_MS) {
        size.gaps.push(gap);
        if (before.sampled !== undefined) size.samples.push(before.sampled - before.end);
      }
    }
  });
  return [...sizes]
    .sort(([a], [b]) => a - b)
    .map(([tokens, { durations, gaps, samples }]) => ({
      tokens,
      decodes: durations.length,
      decodeMedianMs: median(durations),
      decodeMeanMs: mean(durations),
      gaps: gaps.length,
      gapMedianMs: median(gaps),
      gapMeanMs: mean(gaps),
      sampleMedianMs: median(samples),
      sampleMeanMs: mean(samples),
    }));
}
