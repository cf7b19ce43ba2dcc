import type { LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import { EngineFailure } from "./engine-failure";
import { EMBEDDING_MAX_TOKENS, type EmbedResult } from "../../common/engine-protocol";

/** Tokens the embedding context holds; router texts are short, longer ones are truncated. */
const EMBEDDING_CONTEXT_SIZE = 2048;

/** BOS and EOS, which node-llama-cpp adds around an input, plus one token of headroom. */
const RESERVED_TOKENS = EMBEDDING_CONTEXT_SIZE - EMBEDDING_MAX_TOKENS;

/**
 * Sentence embeddings under the base model, for the adapter router. The embedding context is
 * created on first use (most sessions never embed) and is separate from the chat context, so
 * the chat context's adapters never apply here. Pooling is the model's own (llama.pooling_type;
 * the demo models use mean pooling); vectors are L2-normalised so a dot product is the cosine.
 */
export class Embedder {
  private context: Promise<LlamaEmbeddingContext> | null = null;

  constructor(
    private readonly model: LlamaModel,
    private readonly threads: number,
  ) {}

  /** One unit-length vector per text (all zeros for an empty text); long texts are truncated. */
  async embed(texts: readonly string[]): Promise<number[][]> {
    const limit = this.maxTokens;
    return this.embedTokens(texts.map((text) => this.model.tokenize(text).slice(0, limit)));
  }

  /**
   * As embed, with each text's token count (BOS/EOS not counted), and never truncated: a text
   * longer than the embedding context takes throws EngineFailure("context_length_exceeded")
   * naming its index (/v1/embeddings answers 400; silently embedding a prefix would misreport).
   */
  async embedCounted(texts: readonly string[]): Promise<EmbedResult> {
    const limit = this.maxTokens;
    const tokenized = texts.map((text) => this.model.tokenize(text));
    const over = tokenized.findIndex((tokens) => tokens.length > limit);
    if (over >= 0)
      throw new EngineFailure(
        "context_length_exceeded",
        `Input ${over} has ${tokenized[over]!.length} tokens; embeddings take at most ${limit} tokens per input.`,
      );
    return { vectors: await this.embedTokens(tokenized), tokens: tokenized.map((tokens) => tokens.length) };
  }

  /**
   * Tokens an input may have: EMBEDDING_MAX_TOKENS, less for a model trained on a shorter
   * context (the embedding context is capped at its training context).
   */
  get maxTokens(): number {
    return Math.min(EMBEDDING_CONTEXT_SIZE, this.model.trainContextSize) - RESERVED_TOKENS;
  }

  private async embedTokens(inputs: readonly Token[][]): Promise<number[][]> {
    if (inputs.length === 0) return [];
    const context = await this.getContext();
    const vectors: number[][] = [];
    for (const tokens of inputs) {
      if (tokens.length === 0) {
        vectors.push(new Array<number>(this.model.embeddingVectorSize).fill(0));
        continue;
      }
      const { vector } = await context.getEmbeddingFor(tokens);
      vectors.push(normalize(vector));
    }
    return vectors;
  }

  async dispose(): Promise<void> {
    const context = this.context;
    this.context = null;
    await context?.then(
      (c) => c.dispose(),
      () => {},
    );
  }

  private getContext(): Promise<LlamaEmbeddingContext> {
    if (!this.context) {
      const contextSize = Math.min(this.model.trainContextSize, EMBEDDING_CONTEXT_SIZE);
      const pending = this.model.createEmbeddingContext({ contextSize, threads: this.threads });
      this.context = pending;
      // A failed creation is retried on the next call rather than cached.
      pending.catch(() => {
        if (this.context === pending) this.context = null;
      });
    }
    return this.context;
  }
}

function normalize(vector: readonly number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? vector.map((x) => x / norm) : [...vector];
}
