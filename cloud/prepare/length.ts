/**
 * Length limits against the base model's context. The base's tokenizer is not at hand here,
 * so the count is the app's own conservative estimate (electron/core/chat/token-estimate:
 * 3 UTF-8 bytes per token, under the ~4 of typical BPE vocabularies on English) plus the chat
 * template's tokens around every message.
 */
import { DEFAULT_BYTES_PER_TOKEN, TokenEstimator } from "../../common/token-estimate";
import type { Message } from "./normalize";

export const DEFAULT_MAX_TOKENS = 4096;
export { DEFAULT_BYTES_PER_TOKEN };
/** The estimator's own bounds on a learned ratio (a byte-level vocabulary is 1). */
export const MIN_BYTES_PER_TOKEN = 1;
export const MAX_BYTES_PER_TOKEN = 6;
/**
 * Template tokens per message: role header and end-of-turn markers (ChatML spends 4–5, Llama 3
 * about 5); 8 leaves room for templates that spend more.
 */
export const TEMPLATE_TOKENS_PER_MESSAGE = 8;

const BASE = "base";

/** A token counter for messages at `bytesPerToken` (the app's estimator, told that ratio). */
export function tokenCounter(
  bytesPerToken = DEFAULT_BYTES_PER_TOKEN,
): (messages: readonly Message[]) => number {
  const estimator = new TokenEstimator();
  estimator.observe(BASE, bytesPerToken, 1);
  return (messages) =>
    messages.reduce((sum, m) => sum + estimator.estimate(m.content, BASE) + TEMPLATE_TOKENS_PER_MESSAGE, 0);
}
