/**
 * `MACARON_ENGINE_TOKEN_DELAY_MS=N`: the engine holds each streamed piece of text N ms, as a
 * machine that generates that slowly would. Off (0) unless set. For tests that act on an answer
 * while it runs (Stop, Escape, a killed engine): the tiny fixture model fills its 4k context in
 * about 3 s on a fast machine, and an answer that ended before the test pressed Stop failed it.
 * The hold blocks the engine's own thread between tokens only; messages from core (an abort)
 * are still read between tokens.
 */
export function tokenDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  const ms = Number(env.MACARON_ENGINE_TOKEN_DELAY_MS ?? 0);
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 1_000) : 0;
}

const cell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks this thread `ms` milliseconds (nothing when 0). */
export function holdToken(ms: number): void {
  if (ms > 0) Atomics.wait(cell, 0, 0, ms);
}
