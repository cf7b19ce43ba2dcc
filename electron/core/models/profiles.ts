/**
 * Defaults for families of models, matched from a GGUF's own metadata. The one profile today
 * is the Tall base's: a ~50B Qwen mixture-of-experts (`qwen3moe`). Everything else loads with
 * the engine's defaults (context from the fit estimate, flash attention by backend).
 */
import type { LoadSettings, ModelProfile } from "../../api";
import type { FitResult } from "../engine/types";

/** What a profile matches on: the GGUF header's facts (native/engine FitModelFacts). */
export type ModelFacts = FitResult["model"];

/**
 * Estimates a profile asks for while choosing its defaults: the fit of this model with a KV
 * cache type (context unset: the fit reports the largest context that fits, `maxContextSize`).
 */
export type FitWith = (options: {
  kvCacheType: LoadSettings["kvCacheType"];
  contextSize?: number;
}) => Promise<FitResult>;

export interface ProfileDefinition {
  id: string;
  label: string;
  matches(facts: ModelFacts): boolean;
  /** The settings for this machine (memory from the fit estimates) and the profile for the user. */
  resolve(fit: FitResult, fitWith: FitWith): Promise<{ profile: ModelProfile; defaults: LoadSettings }>;
}

/** The engine's own defaults: every "decide at load time" left to the engine. */
export const ENGINE_DEFAULTS: LoadSettings = {
  contextSize: null,
  gpuLayers: "auto",
  flashAttention: "auto",
  kvCacheType: "f16",
  batchSize: null,
  threads: null,
};

/** Contexts the Tall base profile picks from, largest first (tokens per sequence). */
export const TALL_CONTEXTS = [32_768, 16_384, 8_192] as const;
/** The smallest of TALL_CONTEXTS: what it gets when nothing fits (and the user is told). */
const TALL_MIN_CONTEXT = 8_192;
/** Below this the Tall base's context is too short for its work; q8_0 KV is tried first. */
const TALL_MIN_F16_CONTEXT = 16_384;

const GB = 1e9;
const gb = (bytes: number): string => `${Math.max(1, Math.round(bytes / GB))} GB`;

/** qwen2moe/qwen3moe GGUFs with real experts (several, a few used per token). */
function isQwenMoe(facts: ModelFacts): boolean {
  return (
    (facts.architecture === "qwen3moe" || facts.architecture === "qwen2moe") &&
    (facts.expertCount ?? 0) > 1 &&
    (facts.expertUsedCount ?? 0) >= 1 &&
    (facts.expertUsedCount ?? 0) < (facts.expertCount ?? 0)
  );
}

/**
 * The largest of TALL_CONTEXTS that fits (and the training context allows); null when even
 * the smallest does not.
 */
export function pickContext(maxContextSize: number, trainContextSize: number): number | null {
  for (const size of TALL_CONTEXTS) if (size <= maxContextSize && size <= trainContextSize) return size;
  return null;
}

export const TALL_BASE_PROFILE: ProfileDefinition = {
  id: "tall-base",
  label: "Tall base (Qwen mixture-of-experts)",
  matches: isQwenMoe,
  async resolve(fit, fitWith) {
    const { machine, model } = fit;
    const notes: string[] = [];
    // Context: 32k/16k/8k as memory allows; a q8_0 KV cache (half the bytes of f16) before
    // going under 16k tokens. Flash attention on: it shrinks the compute buffers on long
    // contexts, and llama.cpp needs it for a quantized V cache.
    let kvCacheType: LoadSettings["kvCacheType"] = "f16";
    // llama.cpp quantizes the KV cache in blocks of 32: other head sizes must stay f16.
    const quantKv = model.headSize === undefined || model.headSize === null || model.headSize % 32 === 0;
    let contextSize =
      fit.maxContextSize >= TALL_MIN_F16_CONTEXT
        ? pickContext(fit.maxContextSize, fit.trainContextSize)
        : null;
    if (contextSize === null && fit.trainContextSize < TALL_MIN_CONTEXT) {
      // Trained on less than the profile's contexts: its own context is the one to use.
      const train = fit.trainContextSize;
      if (fit.maxContextSize >= train) {
        contextSize = train;
        notes.push(`It was trained on ${train} tokens of context: that is its context.`);
      } else {
        contextSize = Math.max(256, fit.maxContextSize);
        notes.push(
          `Its ${train}-token training context does not fit the free memory (${fit.summary}); ${contextSize} tokens do.`,
        );
      }
    }
    if (contextSize === null && quantKv) {
      const q8 = await fitWith({ kvCacheType: "q8_0" });
      const q8Context = pickContext(q8.maxContextSize, q8.trainContextSize);
      const f16Context = pickContext(fit.maxContextSize, fit.trainContextSize);
      if (q8Context !== null && (f16Context === null || q8Context > f16Context)) {
        kvCacheType = "q8_0";
        contextSize = q8Context;
        notes.push(
          `Memory is short for a long f16 KV cache: q8_0 (half the size) gives ${q8Context} tokens.`,
        );
      } else {
        contextSize = f16Context;
      }
    }
    if (contextSize === null && !quantKv) contextSize = pickContext(fit.maxContextSize, fit.trainContextSize);
    if (contextSize === null) {
      contextSize = Math.min(TALL_MIN_CONTEXT, fit.trainContextSize);
      if (quantKv) kvCacheType = "q8_0";
      notes.push(
        `Even ${contextSize} tokens do not fit the free memory (${fit.summary}); close other programs first.`,
      );
    }
    // GPU layers: as many as the fit estimate puts in VRAM with this context ("max" when all fit).
    let gpuLayers: LoadSettings["gpuLayers"] = "auto";
    if (machine.vramTotalBytes > 0) {
      const chosen = await fitWith({ kvCacheType, contextSize });
      gpuLayers = chosen.gpuLayers >= chosen.totalLayers ? "max" : chosen.gpuLayers;
      if (gpuLayers !== "max")
        notes.push(
          `${chosen.gpuLayers} of ${chosen.totalLayers} layers fit the GPU's free VRAM with this context.`,
        );
    }
    notes.push(
      "Experts on CPU where VRAM is short: node-llama-cpp 3.21.1 does not expose llama.cpp's tensor buffer " +
        "overrides (--cpu-moe / --override-tensor, tensor_buft_overrides; its model options pass only " +
        "metadata overrides), so the experts cannot stay on CPU while attention runs on the GPU. " +
        "Instead whole layers go to the GPU as far as the fit estimate says they fit, the rest run on CPU.",
    );
    if (machine.vramTotalBytes === 0)
      notes.push(
        "No GPU here: every layer runs on CPU; only a few experts are active per token, so it stays usable.",
      );
    const active =
      model.expertCount && model.expertUsedCount
        ? `${model.expertUsedCount} of ${model.expertCount} experts per token`
        : "";
    const hardware =
      `Weights ${gb(model.fileBytes)} (${(model.parameters / 1e9).toFixed(1)}B parameters${active ? `, ${active}` : ""}). ` +
      `Needs about ${gb(model.fileBytes * 1.1)} of RAM + VRAM together plus the KV cache; a GPU with ` +
      `${gb(model.fileBytes / 2)}+ VRAM speeds up the layers it holds. For the ~50B Tall base at Q4_K_M: ` +
      "32 GB RAM minimum, 64 GB comfortable, or a 24–48 GB GPU with the rest in RAM.";
    const defaults: LoadSettings = {
      contextSize,
      gpuLayers,
      flashAttention: "on",
      kvCacheType,
      batchSize: null,
      threads: null,
    };
    return { profile: { id: this.id, label: this.label, hardware, defaults, notes }, defaults };
  },
};

export const PROFILES: readonly ProfileDefinition[] = [TALL_BASE_PROFILE];

/** The profile whose family this model belongs to, if any. */
export function matchProfile(facts: ModelFacts): ProfileDefinition | null {
  return PROFILES.find((p) => p.matches(facts)) ?? null;
}
