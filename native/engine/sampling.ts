import { randomInt } from "node:crypto";
import { TokenBias, type LLamaContextualRepeatPenalty, type LlamaModel, type Token } from "node-llama-cpp";
import { EngineFailure } from "./engine-failure";
import type { GenerateOptions } from "../../common/engine-protocol";

/** OpenAI's `logit_bias` floor: a token biased this low is never generated. */
const NEVER = -100;

/** The sampler settings LlamaChat.generateResponse and LlamaCompletion both take. */
export interface SamplerSettings {
  temperature: number;
  seed?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repeatPenalty?: LLamaContextualRepeatPenalty;
  tokenBias?: TokenBias;
}

/**
 * GenerateOptions' samplers in node-llama-cpp's terms. Absent fields stay absent (node-llama-cpp's
 * defaults). top-k/p and min-p only act when temperature > 0 (llama.cpp's greedy chain skips
 * them); repetition penalties and token biases act under greedy decoding too, as in llama.cpp.
 * The seed only matters when sampling, so it is dropped for greedy decoding (as before). Without
 * one, a sampled answer gets a fresh random seed: node-llama-cpp's own default is the current
 * second, so identical requests within one second (parallel clients, a retry) gave the same text.
 *
 * Throws EngineFailure("invalid_request") for a bias on a token id outside the vocabulary: llama.cpp
 * indexes its logits array with the id, so the request never gets that far.
 */
export function samplerSettings(model: LlamaModel, options: GenerateOptions): SamplerSettings {
  const settings: SamplerSettings = { temperature: options.temperature };
  if (options.temperature > 0) settings.seed = options.seed ?? randomSeed();
  if (options.topP !== undefined) settings.topP = options.topP;
  if (options.topK !== undefined) settings.topK = options.topK;
  if (options.minP !== undefined) settings.minP = options.minP;
  const penalty = options.repeatPenalty;
  if (penalty) {
    settings.repeatPenalty = {
      ...(penalty.penalty !== undefined ? { penalty: penalty.penalty } : {}),
      ...(penalty.frequencyPenalty !== undefined ? { frequencyPenalty: penalty.frequencyPenalty } : {}),
      ...(penalty.presencePenalty !== undefined ? { presencePenalty: penalty.presencePenalty } : {}),
      ...(penalty.lastTokens !== undefined ? { lastTokens: penalty.lastTokens } : {}),
    };
  }
  const bias = options.tokenBias ? tokenBias(model, options.tokenBias) : null;
  if (bias) settings.tokenBias = bias;
  return settings;
}

/**
 * A random sampling seed: 0 to 2^32 - 2 (llama.cpp reads seeds as uint32, and 0xFFFFFFFF is its
 * "pick one yourself" value).
 */
export function randomSeed(): number {
  return randomInt(0, 0xffff_ffff);
}

/**
 * OpenAI's `logit_bias` as a TokenBias: the value is added to the token's logit (`{logit}`, not
 * node-llama-cpp's probability-style numbers), and -100 means never (-Infinity). node-llama-cpp
 * ignores biases on end-of-generation tokens (it cannot forbid ending). Null when there is none.
 */
function tokenBias(model: LlamaModel, biases: Record<number, number>): TokenBias | null {
  const entries = Object.entries(biases).map(([id, value]) => [Number(id), value] as const);
  if (entries.length === 0) return null;
  const size = vocabularySize(model);
  if (size === null)
    throw new EngineFailure(
      "invalid_request",
      "This model's file does not say how large its vocabulary is, so token biases cannot be checked; leave them out.",
    );
  const bias = new TokenBias(model.tokenizer);
  for (const [id, value] of entries) {
    if (!Number.isInteger(id) || id < 0 || id >= size)
      throw new EngineFailure(
        "invalid_request",
        `Token id ${id} in the token biases is outside this model's vocabulary (ids 0 to ${size - 1}).`,
      );
    if (value === 0) continue;
    bias.set(id as Token, value <= NEVER ? "never" : { logit: value });
  }
  return bias;
}

/** Tokens in the model's vocabulary, as node-llama-cpp's insights read it from the GGUF; null if unknown. */
export function vocabularySize(model: LlamaModel): number | null {
  const metadata = model.fileInfo.metadata as unknown as Record<string, unknown>;
  const arch = metadata[String(model.fileInfo.metadata.general.architecture)] as
    { vocab_size?: unknown } | undefined;
  if (typeof arch?.vocab_size === "number" && arch.vocab_size > 0) return arch.vocab_size;
  const tokens = (metadata.tokenizer as { ggml?: { tokens?: unknown } } | undefined)?.ggml?.tokens;
  return Array.isArray(tokens) && tokens.length > 0 ? tokens.length : null;
}
