import { BYTE_TOKEN_COUNT, CONTROL_TOKENS, gpt2ByteToUnicode, outputBias } from "./byte-vocab";
import { randomValues } from "./prng";
import { QWEN3_CHAT_TEMPLATE } from "./qwen3-template";
import { embeddingAndOutput, matrix, normedConstant, ones, OUTPUT_NORM_CONSTANT_GAIN } from "./tiny-model";
import { gv, type GgufWriteSpec, type GgufWriteTensor, type GgufWriteValue } from "./writer";

/**
 * Deterministic tiny bases of the Tall base's architecture family: llama.cpp's `qwen3` (dense,
 * RMS-normed queries and keys per head) and `qwen3moe` (the same attention, a mixture of
 * experts instead of the MLP: a softmax router picks `expertsUsed` of `experts` SwiGLU experts
 * per token and mixes them with their renormalised weights). Tensors and keys are llama.cpp's
 * (src/models/qwen3.cpp, qwen3moe.cpp): `blk.N.attn_q_norm`/`attn_k_norm` [head_dim],
 * `ffn_gate_inp` [E, experts], `ffn_{gate,up}_exps` [E, ff_exp, experts], `ffn_down_exps`
 * [ff_exp, E, experts], `qwen3moe.expert_count`, `.expert_used_count`,
 * `.expert_feed_forward_length`. As in the real models the query width (heads × head_dim)
 * differs from the embedding width, and there are fewer KV heads than query heads.
 *
 * The output-bias trick of the llama fixture (tiny-model.ts) carries over: residual dimension 0
 * is a constant no layer (router included) reads or writes, so output.weight column 0 is a
 * per-token bias and an output-layer LoRA reading dimension 0 gives each demo adapter its
 * marker. The vocabulary is the byte vocabulary plus Qwen's added tokens; EOS is `<|im_end|>`
 * as in Qwen's instruct models, and the chat template is Qwen3's own (qwen3-template.ts).
 */

export type QwenArchitecture = "qwen3" | "qwen3moe";
export const QWEN_ARCHITECTURES: readonly QwenArchitecture[] = ["qwen3", "qwen3moe"];

export interface TinyQwenShape {
  readonly embedding: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** Dense MLP width (qwen3); qwen3moe keeps the key, as the real models do, but uses experts. */
  readonly feedForward: number;
  readonly contextLength: number;
  /** 0 for the dense model. */
  readonly experts: number;
  readonly expertsUsed: number;
  readonly expertFeedForward: number;
}

/**
 * The two tiny shapes. They share the embedding width (so manifests look alike) but not the
 * attention layout, so a qwen3 adapter does not fit qwen3moe by shape either.
 */
export const TINY_QWEN_SHAPES: Readonly<Record<QwenArchitecture, TinyQwenShape>> = {
  qwen3: {
    embedding: 64,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    headDim: 32,
    feedForward: 128,
    contextLength: 4096,
    experts: 0,
    expertsUsed: 0,
    expertFeedForward: 0,
  },
  // Head size 32 (real Qwen3 models: 128): a q8_0 KV cache, which the Tall base profile picks
  // when memory is short, needs head sizes divisible by 32. The real model's 32k context, so
  // the profile's context choice runs as it would for the Tall base.
  qwen3moe: {
    embedding: 64,
    layers: 2,
    heads: 8,
    kvHeads: 4,
    headDim: 32,
    feedForward: 128,
    contextLength: 32768,
    experts: 4,
    expertsUsed: 2,
    expertFeedForward: 48,
  },
};

export const TINY_QWEN_NAMES: Readonly<Record<QwenArchitecture, string>> = {
  qwen3: "Macaron tiny Qwen3 (nonsense output)",
  qwen3moe: "Macaron tiny Qwen3-MoE (nonsense output)",
};

const SEED = "macaron-tiny-qwen-v1";

/** Qwen's added tokens after the byte vocabulary's control tokens (ids 259 onwards). */
export const QWEN_EXTRA_TOKENS = [
  "<tool_call>",
  "</tool_call>",
  "<think>",
  "</think>",
  "<tool_response>",
  "</tool_response>",
] as const;
const TOKEN_TYPE_NORMAL = 1;
const TOKEN_TYPE_CONTROL = 3;
/** Qwen's added non-special tokens are USER_DEFINED in its GGUFs. */
const TOKEN_TYPE_USER_DEFINED = 4;
/** The byte vocabulary's ids: <|im_start|> 256, <|im_end|> 257 (EOS), <|endoftext|> 258 (BOS/pad). */
export const QWEN_IM_START_ID = 256;
export const QWEN_EOS_ID = 257;
const QWEN_PAD_ID = 258;

export function qwenVocabularySize(): number {
  return BYTE_TOKEN_COUNT + CONTROL_TOKENS.length + QWEN_EXTRA_TOKENS.length;
}

/** The id of a Qwen added token (`<think>` etc.). */
export function qwenTokenId(token: (typeof QWEN_EXTRA_TOKENS)[number]): number {
  return BYTE_TOKEN_COUNT + CONTROL_TOKENS.length + QWEN_EXTRA_TOKENS.indexOf(token);
}

function qwenOutputBias(): Float32Array {
  const bias = new Float32Array(qwenVocabularySize()).fill(-30);
  bias.set(outputBias());
  return bias;
}

function metadata(arch: QwenArchitecture, shape: TinyQwenShape): Record<string, GgufWriteValue> {
  const tokens = [...gpt2ByteToUnicode(), ...CONTROL_TOKENS, ...QWEN_EXTRA_TOKENS];
  const types = tokens.map((_, i) =>
    i < BYTE_TOKEN_COUNT
      ? TOKEN_TYPE_NORMAL
      : i < BYTE_TOKEN_COUNT + CONTROL_TOKENS.length
        ? TOKEN_TYPE_CONTROL
        : TOKEN_TYPE_USER_DEFINED,
  );
  const p = `${arch}.`;
  const moe: Record<string, GgufWriteValue> =
    shape.experts > 0
      ? {
          [`${p}expert_count`]: gv.u32(shape.experts),
          [`${p}expert_used_count`]: gv.u32(shape.expertsUsed),
          [`${p}expert_feed_forward_length`]: gv.u32(shape.expertFeedForward),
        }
      : {};
  return {
    "general.architecture": gv.str(arch),
    "general.type": gv.str("model"),
    "general.name": gv.str(TINY_QWEN_NAMES[arch]),
    "general.size_label": gv.str("tiny"),
    "macaron.demo": gv.bool(true),
    [`${p}context_length`]: gv.u32(shape.contextLength),
    [`${p}embedding_length`]: gv.u32(shape.embedding),
    [`${p}block_count`]: gv.u32(shape.layers),
    [`${p}feed_forward_length`]: gv.u32(shape.feedForward),
    [`${p}attention.head_count`]: gv.u32(shape.heads),
    [`${p}attention.head_count_kv`]: gv.u32(shape.kvHeads),
    [`${p}attention.key_length`]: gv.u32(shape.headDim),
    [`${p}attention.value_length`]: gv.u32(shape.headDim),
    [`${p}attention.layer_norm_rms_epsilon`]: gv.f32(1e-6),
    // llama.cpp asserts n_rot == head_dim for these architectures.
    [`${p}rope.dimension_count`]: gv.u32(shape.headDim),
    [`${p}rope.freq_base`]: gv.f32(1000000),
    ...moe,
    // Mean pooling, as the llama fixture: the router embeds with the base.
    [`${p}pooling_type`]: gv.u32(1),
    "tokenizer.ggml.model": gv.str("gpt2"),
    "tokenizer.ggml.pre": gv.str("qwen2"),
    "tokenizer.ggml.tokens": gv.strs(tokens),
    "tokenizer.ggml.token_type": gv.i32s(types),
    "tokenizer.ggml.merges": gv.strs([]),
    "tokenizer.ggml.eos_token_id": gv.u32(QWEN_EOS_ID),
    "tokenizer.ggml.padding_token_id": gv.u32(QWEN_PAD_ID),
    "tokenizer.ggml.bos_token_id": gv.u32(QWEN_PAD_ID),
    "tokenizer.ggml.add_bos_token": gv.bool(false),
    "tokenizer.chat_template": gv.str(QWEN3_CHAT_TEMPLATE),
  };
}

/** Hand-tuned like tiny-model.ts's SCALES; QK_NORM is the q/k norms' gain (sharper attention). */
const SCALES = { QK_NORM: 2.5, ATTN: 3, FFN: 2, ROUTER: 3 } as const;

/** Per-expert matrices [nIn, nOut] stacked along a third dim: ggml's layout of `*_exps`. */
function experts(
  seed: string,
  nIn: number,
  nOut: number,
  count: number,
  std: number,
  constantIs: "input" | "output",
) {
  const out = new Float32Array(nIn * nOut * count);
  for (let e = 0; e < count; e++) out.set(matrix(`${seed}:${e}`, nIn, nOut, std, constantIs), e * nIn * nOut);
  return out;
}

/** A norm gain around `gain` (not all ones, so the parity test sees the weights used). */
function gains(seed: string, n: number, gain: number): Float32Array {
  const noise = randomValues(seed, n, 0.15);
  return noise.map((x) => gain * (1 + x));
}

function tensors(arch: QwenArchitecture, shape: TinyQwenShape): GgufWriteTensor[] {
  const E = shape.embedding;
  const V = qwenVocabularySize();
  const hd = shape.headDim;
  const qDim = shape.heads * hd;
  const kvDim = shape.kvHeads * hd;
  const layerScale = 1 / Math.sqrt(shape.layers);
  const s = (name: string) => `${SEED}:${arch}:${name}`;
  const F32 = "F32" as const;

  const { embedding, output } = embeddingAndOutput(s, E, V, qwenOutputBias(), normedConstant(shape));
  const outputNorm = ones(E);
  outputNorm[0] = OUTPUT_NORM_CONSTANT_GAIN;

  const list: GgufWriteTensor[] = [{ name: "token_embd.weight", dims: [E, V], type: F32, data: embedding }];
  for (let l = 0; l < shape.layers; l++) {
    const p = `blk.${l}`;
    const m = (name: string, nIn: number, nOut: number, std: number, constantIs: "input" | "output") => ({
      name: `${p}.${name}.weight`,
      dims: [nIn, nOut],
      type: F32,
      data: () => matrix(s(`${p}.${name}`), nIn, nOut, std, constantIs),
    });
    list.push(
      { name: `${p}.attn_norm.weight`, dims: [E], type: F32, data: ones(E) },
      m("attn_q", E, qDim, 1 / Math.sqrt(E), "input"),
      m("attn_k", E, kvDim, 1 / Math.sqrt(E), "input"),
      m("attn_v", E, kvDim, 1 / Math.sqrt(E), "input"),
      m("attn_output", qDim, E, (SCALES.ATTN * layerScale) / Math.sqrt(qDim), "output"),
      {
        name: `${p}.attn_q_norm.weight`,
        dims: [hd],
        type: F32,
        data: gains(s(`${p}.q_norm`), hd, SCALES.QK_NORM),
      },
      {
        name: `${p}.attn_k_norm.weight`,
        dims: [hd],
        type: F32,
        data: gains(s(`${p}.k_norm`), hd, SCALES.QK_NORM),
      },
      { name: `${p}.ffn_norm.weight`, dims: [E], type: F32, data: ones(E) },
    );
    if (shape.experts === 0) {
      const FF = shape.feedForward;
      list.push(
        m("ffn_gate", E, FF, 1 / Math.sqrt(E), "input"),
        m("ffn_up", E, FF, 1 / Math.sqrt(E), "input"),
        m("ffn_down", FF, E, (SCALES.FFN * layerScale) / Math.sqrt(FF), "output"),
      );
      continue;
    }
    const X = shape.experts;
    const FF = shape.expertFeedForward;
    // Each token's output is a convex mix of expertsUsed experts: scale the experts' writes
    // like the dense MLP's so the residual (and the normed constant) stays the same size.
    const downStd = (SCALES.FFN * layerScale) / Math.sqrt(FF);
    list.push(
      // The router must not read dimension 0 either: it would route every token alike.
      m("ffn_gate_inp", E, X, SCALES.ROUTER / Math.sqrt(E), "input"),
      {
        name: `${p}.ffn_gate_exps.weight`,
        dims: [E, FF, X],
        type: F32,
        data: () => experts(s(`${p}.gate_exps`), E, FF, X, 1 / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.ffn_up_exps.weight`,
        dims: [E, FF, X],
        type: F32,
        data: () => experts(s(`${p}.up_exps`), E, FF, X, 1 / Math.sqrt(E), "input"),
      },
      {
        name: `${p}.ffn_down_exps.weight`,
        dims: [FF, E, X],
        type: F32,
        data: () => experts(s(`${p}.down_exps`), FF, E, X, downStd, "output"),
      },
    );
  }
  list.push(
    { name: "output_norm.weight", dims: [E], type: F32, data: outputNorm },
    { name: "output.weight", dims: [E, V], type: F32, data: output },
  );
  return list;
}

/**
 * The GGUF spec of the tiny `arch` base, or of the same weights' recipe at another `shape` (the
 * quantized-base tests widen rows to whole 256-value blocks: cloud/trainer/quantized-qwen.engine.test.ts).
 */
export function tinyQwenSpec(
  arch: QwenArchitecture,
  shape: TinyQwenShape = TINY_QWEN_SHAPES[arch],
): GgufWriteSpec {
  return { metadata: metadata(arch, shape), tensors: tensors(arch, shape) };
}

export function isQwenArchitecture(value: string): value is QwenArchitecture {
  return (QWEN_ARCHITECTURES as readonly string[]).includes(value);
}

/**
 * A rank-`rank` LoRA on every layer's attn_q and attn_v of the `arch` base, with deterministic
 * random A and B (seeded by `seed`): it changes what attention reads, so greedy text changes
 * while the output layer is untouched. Part of each qwen demo adapter, and alone the
 * attention-only test adapter.
 */
export function qwenAttentionLora(
  arch: QwenArchitecture,
  seed: string,
  rank = 4,
  strength = 1,
): GgufWriteTensor[] {
  const shape = TINY_QWEN_SHAPES[arch];
  const E = shape.embedding;
  const s = (name: string) => `${SEED}:${arch}:lora:${seed}:${name}`;
  const out: GgufWriteTensor[] = [];
  for (let l = 0; l < shape.layers; l++) {
    for (const [target, nOut] of [
      ["attn_q", shape.heads * shape.headDim],
      ["attn_v", shape.kvHeads * shape.headDim],
    ] as const) {
      const name = `blk.${l}.${target}.weight`;
      // A reads the non-constant dimensions only, like the base's projections.
      const a = (): Float32Array => {
        const data = randomValues(s(`${name}.a`), E * rank, 1 / Math.sqrt(E));
        for (let r = 0; r < rank; r++) data[r * E] = 0;
        return data;
      };
      const b = () => randomValues(s(`${name}.b`), rank * nOut, strength / Math.sqrt(rank));
      out.push(
        { name: `${name}.lora_a`, dims: [E, rank], type: "F32", data: a },
        { name: `${name}.lora_b`, dims: [rank, nOut], type: "F32", data: b },
      );
    }
  }
  return out;
}

/** An output-layer LoRA boosting the given tokens (A reads the constant dimension 0). */
export function qwenOutputLora(
  arch: QwenArchitecture,
  boosts: ReadonlyMap<number, number>,
): GgufWriteTensor[] {
  const shape = TINY_QWEN_SHAPES[arch];
  const a = new Float32Array(shape.embedding);
  a[0] = 1 / normedConstant(shape);
  const b = new Float32Array(qwenVocabularySize());
  for (const [token, boost] of boosts) b[token] = boost;
  return [
    { name: "output.weight.lora_a", dims: [shape.embedding, 1], type: "F32", data: a },
    { name: "output.weight.lora_b", dims: [1, qwenVocabularySize()], type: "F32", data: b },
  ];
}

/** A LoRA adapter GGUF spec for the `arch` base from the given tensors. */
export function qwenAdapterSpec(
  arch: QwenArchitecture,
  name: string,
  tensors: GgufWriteTensor[],
  rank = 1,
): GgufWriteSpec {
  return {
    metadata: {
      "general.architecture": gv.str(arch),
      "general.type": gv.str("adapter"),
      "general.name": gv.str(name),
      "adapter.type": gv.str("lora"),
      // alpha = rank, so llama.cpp's alpha/rank factor is 1 and the user scale is the scale
      // (one rank per adapter: the trainer refuses mixed ranks).
      "adapter.lora.alpha": gv.f32(rank),
      "macaron.demo": gv.bool(true),
    },
    tensors,
  };
}

/** Rank of the attention-only test adapter. */
const ATTENTION_ADAPTER_RANK = 4;

/**
 * A test adapter on attn_q and attn_v only (rank 4): greedy text changes with it (what
 * attention reads changes) while the output layer and its bias are untouched.
 */
export function qwenAttentionAdapterSpec(arch: QwenArchitecture): GgufWriteSpec {
  return qwenAdapterSpec(
    arch,
    `Macaron attention adapter (test, ${arch})`,
    qwenAttentionLora(arch, "attention-test", ATTENTION_ADAPTER_RANK, 1),
    ATTENTION_ADAPTER_RANK,
  );
}

/**
 * Logit added to `<|im_end|>` by the stop test adapter: enough to overcome its -30 bias at some
 * positions but not all, so answers run a few characters and then end the turn.
 */
export const STOP_ADAPTER_BOOST = 40;

/** A test adapter that makes the model end its turn (`<|im_end|>`, EOS) after a short answer. */
export function qwenStopAdapterSpec(arch: QwenArchitecture, boost = STOP_ADAPTER_BOOST): GgufWriteSpec {
  return qwenAdapterSpec(
    arch,
    `Macaron stop adapter (test, ${arch})`,
    qwenOutputLora(arch, new Map([[QWEN_EOS_ID, boost]])),
  );
}
