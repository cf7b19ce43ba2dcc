import type { LlamaContext } from "node-llama-cpp";

/** node-llama-cpp 3.21.1's internal: a sequence queues tokens for the context's next batch. */
interface ContextWithDecodes {
  _decodeTokens(...args: unknown[]): Promise<unknown>;
}

/**
 * How long a sequence's next token waits for the other generating sequences' (ms). A token of
 * the ~99M bench model takes ~12 ms on one thread, so the wait is short next to it.
 */
export const DECODE_ALIGN_MS = 2;

/**
 * Line up the generating sequences' tokens so that node-llama-cpp decodes them in one batch.
 * Its dispatcher batches whatever is queued when a batch starts, and after a batch it decodes
 * at once what was queued meanwhile. Each sequence samples its token on a worker and queues the
 * next one when that returns, so two sequences fall out of step: measured on the bench model,
 * two concurrent generations decoded in batches of 1 token, alternating (126 batches for 2 × 63
 * tokens, no gain over one after the other); four in batches of 3. Here a sequence's queued
 * tokens are held until every sequence in use (`active()`) has queued its own, or DECODE_ALIGN_MS
 * has passed (one busy with something else), and then all are handed over in the same tick:
 * batches of 2 and 4, 80 → 107 and 82 → 118 tok/s at 2 and 4 clients (1 thread, 2 cores).
 * Patches the context's internal `_decodeTokens`, as LiveAdapters uses its internal `_setLoras`.
 */
export function alignDecodes(context: LlamaContext, active: () => number, waitMs = DECODE_ALIGN_MS): void {
  const target = context as unknown as ContextWithDecodes;
  const decode = target._decodeTokens.bind(target);
  let held: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  const release = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    const now = held;
    held = [];
    for (const start of now) start();
  };
  target._decodeTokens = (...args: unknown[]) =>
    new Promise((resolve, reject) => {
      held.push(() => void decode(...args).then(resolve, reject));
      if (held.length >= active()) release();
      else timer ??= setTimeout(release, waitMs);
    });
}
