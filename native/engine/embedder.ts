import type { LlamaEmbeddingContext, LlamaModel } from "node-llama-cpp";

/** Tokens the embedding context holds; router texts are short, longer ones are truncated. */
const EMBEDDING_CONTEXT_SIZE = 2048;

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

  /** One unit-length vector per text (all zeros for an empty text). */
  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const context = await this.getContext();
    const vectors: number[][] = [];
    for (const text of texts) {
      // Leave room for the BOS/EOS tokens node-llama-cpp adds, and stay below the context size.
      const tokens = this.model.tokenize(text).slice(0, EMBEDDING_CONTEXT_SIZE - 3);
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
