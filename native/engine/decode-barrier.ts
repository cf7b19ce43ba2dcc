import type { LlamaContext } from "node-llama-cpp";
import { hasChoice, MicroBatchChoice, microBatchSetting, stepShape } from "./micro-batches";

/** node-llama-cpp 3.21.1's internal: a sequence queues tokens for the context's next batch. */
interface ContextWithDecodes {
  _decodeTokens(
    request: { sequenceId: number; tokens: readonly unknown[] },
    ...rest: unknown[]
  ): Promise<unknown>;
  /** What is queued for the next batch (a joining prompt's chunks still to decode, say). */
  _queuedDecodes?: readonly unknown[];
}

/**
 * How long a sequence's next token waits for a generating sequence that is neither queued nor
 * being decoded (busy with something else: its prompt's preparation, erasing a stale cache
 * tail, finishing). A token of the ~99M bench model takes ~10 ms on one thread.
 */
export const DECODE_ALIGN_MS = 2;

/**
 * Line up the generating sequences' tokens so that node-llama-cpp decodes them in one batch per
 * step, as llama-server's slots are. Its dispatcher batches whatever is queued when a batch
 * starts and, after a batch, decodes at once what was queued meanwhile. Each sequence samples
 * its token and queues the next one when its decode returns, so without this two sequences fall
 * out of step: measured on the bench model, two concurrent generations decoded in alternating
 * batches of 1 token (126 batches for 2 × 63 tokens, no gain over one after the other).
 *
 * Here a sequence's queued tokens are held until every sequence in use (`active()`) has queued
 * its own, and then all are handed over together:
 * - while a generation step (one token) is being decoded, the others wait for it: its sequence
 *   comes back as soon as that decode ends, and the next step takes them all. A fixed wait alone
 *   (the barrier before) let a sequence that had fallen half a step behind stay there: traced
 *   through /v1, two clients' tokens then went in alternating 1-token batches for their whole
 *   answers;
 * - otherwise (a sequence busy elsewhere, or a joining request's prompt being decoded, which
 *   node-llama-cpp splits into batch-size chunks over several loops) the others wait at most
 *   `waitMs`, so the running streams go on in the prompt's next chunk instead of stopping for
 *   the whole prompt.
 *
 * The tokens are handed over in sequence-id order. With a KV cache per sequence (llama.cpp's
 * non-unified cache, as node-llama-cpp creates it) a micro-batch takes only sequences whose ids
 * increase by one in batch order (llama_batch_allocr::split_equal, "sequential"), so the 4 tokens
 * of sequences 2, 0, 3, 1 in arrival order were decoded as 2 micro-batches ({2, 3} and {0, 1}),
 * each reading all the weights; in order they are one, as llama-server's slots are (when the
 * sequences in use have consecutive ids: 0 and 2 with 1 idle still make two).
 *
 * The hand-over happens on the next turn of the event loop (setImmediate), never inside the
 * dispatcher's own continuation: node-llama-cpp's dispatcher keeps the context lock for as long
 * as it finds tokens queued after a batch, and a sequence that must erase its stale cache tail
 * first (a request that reuses a cached prefix) waits for that lock. Handed over synchronously,
 * the tokens were always there in time, and such a request waited until every other generation
 * had ended (2.2 s behind the others of its round, measured through /v1).
 *
 * A step of generation tokens only (no prompt with it) may instead go in descending order, one
 * micro-batch per sequence, where that decodes faster on this machine: `choice` learns which,
 * per shape of step (sequences 0–3, or 0, 1 and 3 whose ascending order makes two micro-batches;
 * micro-batches.ts).
 *
 * Patches the context's internal `_decodeTokens`, as LiveAdapters uses its internal `_setLoras`.
 */
export function alignDecodes(
  context: LlamaContext,
  active: () => number,
  waitMs = DECODE_ALIGN_MS,
  choice = new MicroBatchChoice({ fixed: microBatchSetting() }),
): void {
  const target = context as unknown as ContextWithDecodes;
  const decode = target._decodeTokens.bind(target);
  let held: { sequenceId: number; step: boolean; start: () => Promise<unknown> }[] = [];
  /** Generation steps (one token) handed to node-llama-cpp and not yet returned. */
  let stepsInFlight = 0;
  let timer: NodeJS.Timeout | null = null;
  let handOver: NodeJS.Immediate | null = null;
  const release = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (handOver) return;
    handOver = setImmediate(() => {
      handOver = null;
      const now = held;
      held = [];
      // In sequence order (see above), or reversed for a step decoded faster apart: steps of
      // generation tokens only, learnt per shape (its runs of consecutive ids, micro-batches.ts).
      now.sort((a, b) => a.sequenceId - b.sequenceId);
      const shape = now.every((h) => h.step) ? stepShape(now.map((h) => h.sequenceId)) : null;
      const choosing = shape !== null && hasChoice(shape);
      const mode = choosing ? choice.pick(shape) : "together";
      if (mode === "apart") now.reverse();
      const started = performance.now();
      const returned = now.map(({ start }) => start());
      // Timed only when the step has the batch to itself (no prompt chunk queued beside it).
      if (choosing && (target._queuedDecodes?.length ?? now.length) === now.length)
        void Promise.allSettled(returned).then(() => choice.record(shape, mode, performance.now() - started));
    });
  };
  const settle = (): void => {
    if (held.length === 0 || handOver) return;
    if (held.length >= active()) release();
    else if (stepsInFlight === 0) timer ??= setTimeout(release, waitMs);
  };
  target._decodeTokens = (request, ...rest) =>
    new Promise((resolve, reject) => {
      const step = request.tokens.length === 1;
      held.push({
        sequenceId: request.sequenceId,
        step,
        start: () => {
          if (step) stepsInFlight++;
          let decoded: Promise<unknown>;
          try {
            decoded = decode(request, ...rest);
          } catch (error) {
            // Thrown, not rejected: the others of this hand-over still go.
            decoded = Promise.reject(error instanceof Error ? error : new Error(String(error)));
          }
          const returned = decoded.finally(() => {
            if (step) stepsInFlight--;
            settle();
          });
          returned.then(resolve, reject);
          return returned;
        },
      });
      settle();
    });
}
