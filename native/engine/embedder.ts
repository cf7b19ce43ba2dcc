import {
  LlamaVocabularyType,
  type LlamaContext,
  type LlamaEmbeddingContext,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { EngineFailure } from "./engine-failure";
import { EMBEDDING_MAX_TOKENS, type EmbedResult } from "../../common/engine-protocol";

/** Tokens the embedding context holds; router texts are short, longer ones are truncated. */
const EMBEDDING_CONTEXT_SIZE = 2048;

/** BOS and EOS, which node-llama-cpp adds around an input, plus one token of headroom. */
const RESERVED_TOKENS = EMBEDDING_CONTEXT_SIZE - EMBEDDING_MAX_TOKENS;

/**
 * Texts one decode embeds at most, each on its own sequence of the batched context. node-llama-cpp
 * sizes a context as a whole number of 256-cell blocks per sequence, so 8 sequences are the most
 * that keep the context at 2,048 cells (32 would be 8,192 cells, 4× the KV memory, for no use).
 */
export const EMBEDDING_SEQUENCES = 8;

/**
 * node-llama-cpp 3.21.1's native context as LlamaContext holds it (`_ctx`, not in its typings),
 * with the app's addon patch (electron/core/engine/llama-patches.ts, sequence-embeddings):
 * `getSequenceEmbedding` is there only in a local build made with it.
 */
interface NativeEmbeddingContext {
  initBatch(size: number): void;
  addToBatch(
    sequenceId: number,
    firstTokenIndex: number,
    tokens: Uint32Array,
    outputs: Uint32Array,
  ): Uint32Array;
  decodeBatch(): Promise<void>;
  disposeSequence(sequenceId: number): void;
  getSequenceEmbedding?(sequenceId: number, outputIndex: number): Float64Array;
}

/** How embeddings are computed: several texts per decode, or one at a time (prebuilt binaries). */
type EmbeddingRunner =
  | { kind: "batched"; context: LlamaContext; native: NativeEmbeddingContext }
  | { kind: "single"; context: LlamaEmbeddingContext };

/**
 * MACARON_EMBEDDING_BATCH=0: one text per decode even where the build can batch (the bench's
 * "before", and a way out should batching misbehave on some machine). Anything else: batched.
 */
export function embeddingBatchSetting(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.MACARON_EMBEDDING_BATCH !== "0";
}

export interface EmbedderOptions {
  /**
   * false: one text per decode even where the build can batch (tests compare the two ways).
   * Default: embeddingBatchSetting(), batched where the binaries have the app's addon patch.
   */
  batched?: boolean;
}

/**
 * Sentence embeddings under the base model, for the adapter router and /v1/embeddings. The
 * embedding context is created on first use (most sessions never embed) and is separate from
 * the chat context, so the chat context's adapters never apply here. Pooling is the model's own
 * (llama.pooling_type; the demo models use mean pooling); vectors are L2-normalised so a dot
 * product is the cosine.
 *
 * Batched: the texts of a call are packed into decodes of up to EMBEDDING_SEQUENCES texts and
 * the context's size in tokens, each text whole on its own sequence (pooling covers one
 * sequence within one decode, so a text is never split), and each sequence's pooled vector is
 * read after the decode. That needs the app's local build of llama.cpp (the addon patch); with
 * node-llama-cpp's prebuilt binaries each text is its own decode (its LlamaEmbeddingContext).
 * Either way a text is embedded in one decode of the whole text: the batch size is the context
 * size (node-llama-cpp's default of 512 split longer texts, and the pooled vector was that of
 * the last part only).
 */
export class Embedder {
  private runner: Promise<EmbeddingRunner> | null = null;

  constructor(
    private readonly model: LlamaModel,
    private readonly threads: number,
    private readonly options: EmbedderOptions = {},
  ) {}

  /** One unit-length vector per text (all zeros for an empty text); long texts are truncated. */
  async embed(texts: readonly string[]): Promise<number[][]> {
    return (await this.embedCounted(texts, undefined, true)).vectors;
  }

  /**
   * As embed, with each text's token count (BOS/EOS not counted), and never truncated: a text
   * longer than the embedding context takes throws EngineFailure("context_length_exceeded")
   * naming its index (/v1/embeddings answers 400; silently embedding a prefix would misreport).
   * Aborting `signal` stops it before its next decode: EngineFailure("aborted"). With
   * `truncate` (Ollama's /api/embed), a long text is cut to its first tokens instead, as embed()
   * does, and counted as cut.
   */
  async embedCounted(texts: readonly string[], signal?: AbortSignal, truncate = false): Promise<EmbedResult> {
    const limit = this.maxTokens;
    const tokenized = texts.map((text) => {
      const tokens = this.model.tokenize(text);
      return truncate ? tokens.slice(0, limit) : tokens;
    });
    const over = tokenized.findIndex((tokens) => tokens.length > limit);
    if (over >= 0)
      throw new EngineFailure(
        "context_length_exceeded",
        `Input ${over} has ${tokenized[over]!.length} tokens; embeddings take at most ${limit} tokens per input.`,
      );
    return {
      vectors: await this.embedTokens(tokenized, signal),
      tokens: tokenized.map((tokens) => tokens.length),
    };
  }

  /**
   * Tokens an input may have: EMBEDDING_MAX_TOKENS, less for a model trained on a shorter
   * context (the embedding context is capped at its training context), the same whether texts
   * share decodes or not.
   */
  get maxTokens(): number {
    return this.contextSize - RESERVED_TOKENS;
  }

  /** Whether texts share decodes (resolves the embedding context: created on first use). */
  async batched(): Promise<boolean> {
    return (await this.getRunner()).kind === "batched";
  }

  /**
   * Tokens one decode takes: the training context capped at EMBEDDING_CONTEXT_SIZE, rounded
   * down to a multiple of EMBEDDING_SEQUENCES. llama.cpp sizes its worst-case graph for an
   * even split of the batch over the context's sequences: with 8 sequences and a batch of, say,
   * 1,001 tokens the shapes do not divide and it aborts the process (GGML_ASSERT in mul_mat).
   */
  private get contextSize(): number {
    const size = Math.min(EMBEDDING_CONTEXT_SIZE, this.model.trainContextSize);
    return size - (size % EMBEDDING_SEQUENCES);
  }

  /**
   * Tokens a decode shared by several texts holds at most: the whole context, less for a model
   * whose layers are narrow. Each text attends to the cells of the whole decode (the mask hides
   * the other texts', but they are still read), about n_kv × width per token against ~12 ×
   * width² for the weights, so for a narrow model long texts are quicker alone: on the demo
   * model (width 64) 8 texts of ~250 tokens took 85 ms shared and 56 ms one at a time, while on
   * the bench model (width 768) shared decodes of 8 texts of ~130 tokens were 1.18× quicker.
   * 4 × the width, at least 256 tokens: short texts always share.
   */
  private get sharedTokens(): number {
    return Math.min(this.contextSize, Math.max(256, 4 * this.model.embeddingVectorSize));
  }

  private async embedTokens(inputs: readonly Token[][], signal?: AbortSignal): Promise<number[][]> {
    if (inputs.length === 0) return [];
    const stopIfAborted = () => {
      if (signal?.aborted) throw new EngineFailure("aborted", "The embeddings were stopped by their caller.");
    };
    const runner = await this.getRunner();
    const width = this.model.embeddingVectorSize;
    const vectors: number[][] = inputs.map(() => []);
    const pending: { index: number; tokens: Token[] }[] = [];
    for (const [index, tokens] of inputs.entries()) {
      if (tokens.length === 0) vectors[index] = new Array<number>(width).fill(0);
      else pending.push({ index, tokens });
    }
    if (runner.kind === "single") {
      for (const { index, tokens } of pending) {
        stopIfAborted();
        vectors[index] = normalize((await runner.context.getEmbeddingFor(tokens)).vector);
      }
      return vectors;
    }
    for (const group of packGroups(
      pending.map((p) => ({ ...p, tokens: withMarkers(this.model, p.tokens) })),
      this.sharedTokens,
    )) {
      stopIfAborted();
      for (const [i, vector] of (await decodeGroup(runner.native, group)).entries())
        vectors[group[i]!.index] = normalize(vector);
    }
    return vectors;
  }

  async dispose(): Promise<void> {
    const runner = this.runner;
    this.runner = null;
    await runner?.then(
      (r) => r.context.dispose(),
      () => {},
    );
  }

  private getRunner(): Promise<EmbeddingRunner> {
    if (!this.runner) {
      const pending = this.createRunner();
      this.runner = pending;
      // A failed creation is retried on the next call rather than cached.
      pending.catch(() => {
        if (this.runner === pending) this.runner = null;
      });
    }
    return this.runner;
  }

  private async createRunner(): Promise<EmbeddingRunner> {
    const size = this.contextSize;
    if (this.options.batched ?? embeddingBatchSetting()) {
      // `_embeddings` is the option node-llama-cpp's own createEmbeddingContext passes; the
      // sequences share the context's cells (kv_unified, the addon patch), so `contextSize` is
      // per sequence and the whole context is `size` cells. Flash attention where the device has
      // it (llama.cpp's "auto": on for the CPU): its CPU kernel skips the cells a row's mask
      // hides, and here most of a decode's cells belong to the other texts (without it, 64
      // medium texts on the bench model went 3.4/s batched against 3.9/s one at a time).
      const context = await this.model.createContext({
        contextSize: Math.ceil(size / EMBEDDING_SEQUENCES),
        sequences: EMBEDDING_SEQUENCES,
        batchSize: size,
        threads: this.threads,
        flashAttention: "auto",
        _embeddings: true,
      } as Parameters<LlamaModel["createContext"]>[0]);
      const native = (context as unknown as { _ctx: NativeEmbeddingContext })._ctx;
      if (typeof native.getSequenceEmbedding === "function") return { kind: "batched", context, native };
      await context.dispose();
    }
    const context = await this.model.createEmbeddingContext({
      contextSize: size,
      batchSize: size,
      threads: this.threads,
    });
    return { kind: "single", context };
  }
}

/**
 * Consecutive groups of inputs for one decode each: at most EMBEDDING_SEQUENCES inputs and
 * `capacity` tokens together; an input longer than `capacity` is a group alone (the context takes
 * any one input: embedCounted refuses longer ones, embed truncates them).
 */
export function packGroups<T extends { tokens: readonly unknown[] }>(
  inputs: readonly T[],
  capacity: number,
): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let tokens = 0;
  for (const input of inputs) {
    if (
      group.length > 0 &&
      (group.length === EMBEDDING_SEQUENCES || tokens + input.tokens.length > capacity)
    ) {
      groups.push(group);
      group = [];
      tokens = 0;
    }
    group.push(input);
    tokens += input.tokens.length;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * One decode of `group`, input i on sequence i from position 0; each input's vector as the
 * context pools it (or its last token's, for a model without pooling). The sequences' cells are
 * freed afterwards, whether the decode worked or not.
 */
async function decodeGroup(
  native: NativeEmbeddingContext,
  group: readonly { tokens: readonly Token[] }[],
): Promise<number[][]> {
  const read = native.getSequenceEmbedding!.bind(native);
  try {
    native.initBatch(group.reduce((sum, input) => sum + input.tokens.length, 0));
    const outputs = group.map(
      ({ tokens }, sequence) =>
        native.addToBatch(sequence, 0, Uint32Array.from(tokens), Uint32Array.of(tokens.length - 1))[0]!,
    );
    await native.decodeBatch();
    return outputs.map((output, sequence) => Array.from(read(sequence, output)));
  } finally {
    for (let sequence = 0; sequence < group.length; sequence++) native.disposeSequence(sequence);
  }
}

/**
 * The tokens node-llama-cpp's embedding context adds around an input (its tokenizerUtils, as
 * llama.cpp's tokenizer would): BOS (CLS for WordPiece) and EOS (SEP for WordPiece), each only
 * where the vocabulary calls for it and the input does not already have it.
 */
export function withMarkers(
  model: { vocabularyType: LlamaVocabularyType; tokens: MarkerTokens },
  tokens: readonly Token[],
): Token[] {
  const { vocabularyType, tokens: special } = model;
  const first =
    vocabularyType === LlamaVocabularyType.rwkv || vocabularyType === LlamaVocabularyType.ugm
      ? null
      : vocabularyType === LlamaVocabularyType.wpm || special.shouldPrependBosToken
        ? special.bos
        : null;
  const last =
    vocabularyType === LlamaVocabularyType.rwkv
      ? null
      : vocabularyType === LlamaVocabularyType.wpm
        ? special.sep
        : vocabularyType === LlamaVocabularyType.ugm || special.shouldAppendEosToken
          ? special.eos
          : null;
  const out = [...tokens];
  if (first != null && out[0] !== first) out.unshift(first);
  if (last != null && out.at(-1) !== last) out.push(last);
  return out;
}

type MarkerTokens = Pick<
  LlamaModel["tokens"],
  "bos" | "eos" | "sep" | "shouldPrependBosToken" | "shouldAppendEosToken"
>;

function normalize(vector: readonly number[]): number[] {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? vector.map((x) => x / norm) : [...vector];
}
