/**
 * Approximate token counts without asking the engine. Typical BPE vocabularies average ~4
 * bytes of English per token; we start at a more careful 3, and after each answer learn the
 * real ratio of the loaded model from what the engine reports (the tiny byte-level demo
 * model has ~1 byte per token: a fixed chars/4 would overflow its context four times over).
 */
export const DEFAULT_BYTES_PER_TOKEN = 3;
const MIN_BYTES_PER_TOKEN = 1;
const MAX_BYTES_PER_TOKEN = 6;

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

export class TokenEstimator {
  private readonly ratios = new Map<string, number>();

  /** Estimated tokens of `text` under model `modelKey` (rounded up). */
  estimate(text: string, modelKey: string | null): number {
    const ratio = (modelKey && this.ratios.get(modelKey)) || DEFAULT_BYTES_PER_TOKEN;
    return Math.ceil(utf8Length(text) / ratio);
  }

  /**
   * Learn from a finished generation: `bytes` of text (prompt and answer) took `tokens`
   * context tokens. Chat-template tokens count as text-less tokens, which errs on the safe side.
   */
  observe(modelKey: string, bytes: number, tokens: number): void {
    if (!(tokens > 0) || !(bytes > 0)) return;
    const ratio = Math.min(MAX_BYTES_PER_TOKEN, Math.max(MIN_BYTES_PER_TOKEN, bytes / tokens));
    this.ratios.set(modelKey, ratio);
  }

  /** The learned bytes per token of a model (tests, diagnostics). */
  ratio(modelKey: string): number {
    return this.ratios.get(modelKey) ?? DEFAULT_BYTES_PER_TOKEN;
  }
}
