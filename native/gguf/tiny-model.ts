import { randomValues } from "./prng";
import { gv, type GgufWriteSpec, type GgufWriteTensor, type GgufWriteValue } from "./writer";
import { BYTE_TOKEN_COUNT, byteVocabulary, CONTROL_TOKENS, outputBias } from "./byte-vocab";

/**
 * A deterministic tiny llama-architecture base model: random weights that node-llama-cpp loads
 * and runs, producing nonsense text fast. Its shape makes it testable:
 *
 * - Residual dimension 0 holds the same constant for every token, and no layer writes to it,
 *   so after the final RMS norm it is a stable positive number. Column 0 of output.weight
 *   therefore acts as a per-token output bias: control tokens (EOS included) and non-ASCII
 *   bytes are pushed far down, lower-case letters and spaces up. Greedy decoding never stops
 *   on its own and prints readable-looking text; the rest of the network still makes the
 *   text depend on the prompt.
 * - A LoRA adapter on output.weight whose A vector reads dimension 0 adds a constant to chosen
 *   tokens' logits, so each specialist adapter has a recognisable greedy output (adapters.ts).
 */

export type TinyModelSize = "tiny" | "small" | "bench";

export interface TinyModelShape {
  readonly embedding: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly feedForward: number;
  readonly contextLength: number;
  readonly tensorType: "F32" | "F16";
}

export const TINY_MODEL_SHAPES: Readonly<Record<TinyModelSize, TinyModelShape>> = {
  tiny: {
    embedding: 64,
    layers: 2,
    heads: 4,
    kvHeads: 4,
    feedForward: 128,
    contextLength: 4096,
    tensorType: "F32",
  },
  small: {
    embedding: 256,
    layers: 4,
    heads: 4,
    kvHeads: 4,
    feedForward: 512,
    contextLength: 4096,
    tensorType: "F32",
  },
  // ~99M parameters in F16: big enough that prompt processing costs something real.
  // 12k context: bench/adapters.ts measures turns on an 8k-token history.
  bench: {
    embedding: 768,
    layers: 12,
    heads: 12,
    kvHeads: 12,
    feedForward: 2560,
    contextLength: 12288,
    tensorType: "F16",
  },
};

export const TINY_MODEL_NAME = "Macaron demo (tiny, nonsense output)";
export const TINY_MODEL_ARCHITECTURE = "llama";
export const TINY_MODEL_SEED = "macaron-tiny-v1";

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/**
 * Value of residual dimension 0 relative to √E. With the layer outputs scaled as below the
 * other dimensions stay near unit size, so the normed dimension 0 lands near
 * `NORMED_CONSTANT_RATIO·√E`; adapters and the output bias divide by that.
 */
export const CONSTANT_RATIO = 2;
const NORMED_CONSTANT_RATIO = 0.85;
/**
 * output_norm's gain on dimension 0. Embeddings (mean pooling) are read after output_norm;
 * at full size the shared constant would make every text look alike (cosine ~0.95). Shrinking
 * it there, and scaling output.weight column 0 and the adapters' A up to match, leaves the
 * logits as they were.
 */
export const OUTPUT_NORM_CONSTANT_GAIN = 0.05;

/** Expected value of dimension 0 of the final normed hidden state. */
export function normedConstant(shape: Pick<TinyModelShape, "embedding">): number {
  return NORMED_CONSTANT_RATIO * Math.sqrt(shape.embedding) * OUTPUT_NORM_CONSTANT_GAIN;
}

export function vocabularySize(): number {
  return BYTE_TOKEN_COUNT + CONTROL_TOKENS.length;
}

/**
 * The metadata of a llama-architecture model of `shape` with the byte vocabulary and the ChatML
 * template: the generated fixtures and the trained demo base (demo-base.ts) share it.
 */
export function byteModelMetadata(
  sizeLabel: string,
  shape: TinyModelShape,
  name: string = TINY_MODEL_NAME,
): Record<string, GgufWriteValue> {
  const vocab = byteVocabulary();
  const headDim = shape.embedding / shape.heads;
  return {
    "general.architecture": gv.str(TINY_MODEL_ARCHITECTURE),
    "general.type": gv.str("model"),
    "general.name": gv.str(name),
    "general.size_label": gv.str(sizeLabel),
    "macaron.demo": gv.bool(true),
    "llama.context_length": gv.u32(shape.contextLength),
    "llama.embedding_length": gv.u32(shape.embedding),
    "llama.block_count": gv.u32(shape.layers),
    "llama.feed_forward_length": gv.u32(shape.feedForward),
    "llama.attention.head_count": gv.u32(shape.heads),
    "llama.attention.head_count_kv": gv.u32(shape.kvHeads),
    "llama.attention.layer_norm_rms_epsilon": gv.f32(1e-5),
    "llama.rope.dimension_count": gv.u32(headDim),
    "llama.rope.freq_base": gv.f32(10000),
    "llama.pooling_type": gv.u32(1),
    "tokenizer.ggml.model": gv.str("gpt2"),
    "tokenizer.ggml.pre": gv.str("default"),
    "tokenizer.ggml.tokens": gv.strs(vocab.tokens),
    "tokenizer.ggml.token_type": gv.i32s(vocab.tokenTypes),
    "tokenizer.ggml.merges": gv.strs([]),
    "tokenizer.ggml.bos_token_id": gv.u32(vocab.bosId),
    "tokenizer.ggml.eos_token_id": gv.u32(vocab.eosId),
    "tokenizer.ggml.add_bos_token": gv.bool(false),
    "tokenizer.chat_template": gv.str(CHATML_TEMPLATE),
  };
}

/**
 * Weight scales, tuned by hand against node-llama-cpp so that greedy text from the base varies
 * with the prompt instead of falling into one repeated letter at once (QK: sharper attention,
 * ATTN: attention matters next to the token embedding, ANTI: see `output`).
 */
const SCALES = { EMB: 1, QK: 4, ATTN: 3, FFN: 2, OUT: 6, ANTI: 32 } as const;

/**
 * A weight matrix [nIn, nOut]. Layers must neither read the constant dimension 0 (it would add
 * the same vector to every token and drown the prompt's influence) nor write it (it carries
 * the output bias), so `constantIs` zeroes input column 0 or output row 0.
 */
export function matrix(
  seed: string,
  nIn: number,
  nOut: number,
  std: number,
  constantIs: "input" | "output",
): Float32Array {
  const data = randomValues(seed, nIn * nOut, std);
  if (constantIs === "output") data.fill(0, 0, nIn);
  else for (let row = 0; row < nOut; row++) data[row * nIn] = 0;
  return data;
}

/**
 * token_embd and output of a byte-vocabulary tiny base (`seeded` names each tensor's random
 * stream): every token's embedding carries the shared constant in dimension 0, and output's
 * column 0 turns the normed constant `h0` into the per-token `bias`.
 */
export function embeddingAndOutput(
  seeded: (name: string) => string,
  E: number,
  V: number,
  bias: Float32Array,
  h0: number,
): { embedding: () => Float32Array; output: () => Float32Array } {
  const embedding = (): Float32Array => {
    const data = randomValues(seeded("token_embd"), E * V, SCALES.EMB);
    for (let v = 0; v < V; v++) data[v * E] = CONSTANT_RATIO * Math.sqrt(E);
    return data;
  };
  const output = (): Float32Array => {
    const data = randomValues(seeded("output"), E * V, SCALES.OUT / Math.sqrt(E));
    // Subtracting a multiple of each token's own embedding discourages repeating the tokens
    // just seen, which keeps greedy output from collapsing into "jjjj".
    const emb = embedding();
    // <embedding, embedding> grows with E, so divide by E to keep the effect size-independent.
    const anti = SCALES.ANTI / E;
    for (let i = 0; i < E * V; i++) data[i]! -= anti * emb[i]!;
    for (let v = 0; v < V; v++) data[v * E] = bias[v]! / h0;
    return data;
  };
  return { embedding, output };
}

export function ones(n: number): Float32Array {
  return new Float32Array(n).fill(1);
}

function tensors(shape: TinyModelShape, seed: string): GgufWriteTensor[] {
  const E = shape.embedding;
  const V = vocabularySize();
  const FF = shape.feedForward;
  const headDim = E / shape.heads;
  const qDim = shape.heads * headDim;
  const kvDim = shape.kvHeads * headDim;
  const type = shape.tensorType;
  // Scaling the residual writes by 1/√layers keeps the residual's size independent of depth,
  // so the normed constant dimension (the bias carrier) stays near the same value.
  const layerScale = 1 / Math.sqrt(shape.layers);
  const s = (name: string) => `${seed}:${name}`;

  const { embedding, output } = embeddingAndOutput(s, E, V, outputBias(), normedConstant(shape));

  const outputNorm = ones(E);
  outputNorm[0] = OUTPUT_NORM_CONSTANT_GAIN;

  const list: GgufWriteTensor[] = [{ name: "token_embd.weight", dims: [E, V], type, data: embedding }];
  for (let l = 0; l < shape.layers; l++) {
    const p = `blk.${l}`;
    list.push(
      { name: `${p}.attn_norm.weight`, dims: [E], type: "F32", data: ones(E) },
      {
        name: `${p}.attn_q.weight`,
        dims: [E, qDim],
        type,
        data: () => matrix(s(`${p}.q`), E, qDim, SCALES.QK / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.attn_k.weight`,
        dims: [E, kvDim],
        type,
        data: () => matrix(s(`${p}.k`), E, kvDim, SCALES.QK / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.attn_v.weight`,
        dims: [E, kvDim],
        type,
        data: () => matrix(s(`${p}.v`), E, kvDim, 1 / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.attn_output.weight`,
        dims: [qDim, E],
        type,
        data: () => matrix(s(`${p}.o`), qDim, E, (SCALES.ATTN * layerScale) / Math.sqrt(qDim), "output"),
      },
      { name: `${p}.ffn_norm.weight`, dims: [E], type: "F32", data: ones(E) },
      {
        name: `${p}.ffn_gate.weight`,
        dims: [E, FF],
        type,
        data: () => matrix(s(`${p}.gate`), E, FF, 1 / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.ffn_up.weight`,
        dims: [E, FF],
        type,
        data: () => matrix(s(`${p}.up`), E, FF, 1 / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.ffn_down.weight`,
        dims: [FF, E],
        type,
        data: () => matrix(s(`${p}.down`), FF, E, (SCALES.FFN * layerScale) / Math.sqrt(FF), "output"),
      },
    );
  }
  list.push(
    { name: "output_norm.weight", dims: [E], type: "F32", data: outputNorm },
    { name: "output.weight", dims: [E, V], type, data: output },
  );
  return list;
}

/** The GGUF spec (metadata + lazily generated tensors) of the demo base model of `size`. */
export function tinyModelSpec(size: TinyModelSize = "tiny"): GgufWriteSpec {
  const shape = TINY_MODEL_SHAPES[size];
  return { metadata: byteModelMetadata(size, shape), tensors: tensors(shape, `${TINY_MODEL_SEED}:${size}`) };
}

export function isTinyModelSize(value: string): value is TinyModelSize {
  return Object.hasOwn(TINY_MODEL_SHAPES, value);
}
