/**
 * Real models: the model hub (Hugging Face search, repo files, downloads), the models on this
 * machine, the fit estimate, per-model load settings and the llama.cpp build for this machine.
 */
import { z } from "zod";

/** A Hugging Face repo id, `owner/name`. */
export const RepoId = z
  .string()
  .min(3)
  .max(200)
  .regex(/^[A-Za-z0-9][\w.-]*\/[\w.-]+$/, "expected owner/name");

/** A file path inside a repo (no `..`, no leading slash). */
export const RepoPath = z
  .string()
  .min(1)
  .max(1000)
  .refine((p) => !p.startsWith("/") && !p.split("/").includes(".."), "expected a path inside the repo");

export const KvCacheType = z.enum(["f16", "q8_0", "q4_0"]);
export type KvCacheType = z.infer<typeof KvCacheType>;

/**
 * How a model is loaded, remembered per model file. `null` = decided at load time (context from
 * the fit estimate up to the training context, threads and batch from the machine).
 */
export const LoadSettings = z
  .object({
    contextSize: z.number().int().min(256).max(1_048_576).nullable(),
    /** "auto": as many layers as fit the GPU (0 without one); "max": all; N: that many. */
    gpuLayers: z.union([z.literal("auto"), z.literal("max"), z.number().int().min(0).max(1000)]),
    flashAttention: z.enum(["auto", "on", "off"]),
    kvCacheType: KvCacheType,
    batchSize: z.number().int().min(1).max(65_536).nullable(),
    threads: z.number().int().min(1).max(512).nullable(),
  })
  .strict();
export type LoadSettings = z.infer<typeof LoadSettings>;

/** Memory on this machine, as the engine sees it. */
export const MachineMemory = z.object({
  ramTotalBytes: z.number().nonnegative(),
  ramFreeBytes: z.number().nonnegative(),
  /** 0 without a GPU. */
  vramTotalBytes: z.number().nonnegative(),
  vramFreeBytes: z.number().nonnegative(),
  gpu: z.string().nullable(),
  cpuCores: z.number().int().positive(),
});
export type MachineMemory = z.infer<typeof MachineMemory>;

/** node-llama-cpp's GgufInsights estimate for one configuration, against this machine. */
export const FitEstimate = z.object({
  contextSize: z.number().int().positive(),
  gpuLayers: z.number().int().nonnegative(),
  totalLayers: z.number().int().nonnegative(),
  /** RAM the model and its context need (weights on CPU, KV cache, compute buffers). */
  ramBytes: z.number().nonnegative(),
  vramBytes: z.number().nonnegative(),
  /** The largest context that fits this machine with these GPU layers (capped at the training context). */
  maxContextSize: z.number().int().nonnegative(),
  trainContextSize: z.number().int().nonnegative(),
  machine: MachineMemory,
  fits: z.boolean(),
  /** One line for the user: "Fits: 3.1 GB of 15.6 GB RAM" / "Needs 41 GB RAM, this machine has 16 GB". */
  summary: z.string(),
});
export type FitEstimate = z.infer<typeof FitEstimate>;

/** A hub search result. */
export const HubModel = z.object({
  repo: RepoId,
  downloads: z.number().int().nonnegative(),
  likes: z.number().int().nonnegative(),
  updatedAt: z.string().nullable(),
  gated: z.boolean(),
  tags: z.array(z.string()),
  /** The base model the repo names (`base_model:` tag / card data), when it names one. */
  baseModel: z.string().nullable(),
});
export type HubModel = z.infer<typeof HubModel>;

/** One GGUF model in a repo: a single file or the parts of a split GGUF. */
export const HubFile = z.object({
  /** The first (or only) file: what `hub.download` and `hub.fit` take. */
  path: RepoPath,
  /** "Q4_K_M", "F16", … parsed from the file name; null when the name says none. */
  quant: z.string().nullable(),
  /** Sum over all parts. */
  sizeBytes: z.number().int().nonnegative(),
  /** Every part, in order (one entry for a single file), with the hub's LFS sha256. */
  parts: z.array(
    z.object({ path: RepoPath, sizeBytes: z.number().int().nonnegative(), sha256: z.string().nullable() }),
  ),
  /** True for a LoRA adapter GGUF (name or `general.type`), not a base model. */
  isAdapter: z.boolean(),
});
export type HubFile = z.infer<typeof HubFile>;

/**
 * A LoRA adapter on the hub that fits the loaded base (hub.adaptersForBase): a GGUF file, or a
 * PEFT folder (`path` its adapter_model.safetensors, `parts` that and its adapter_config.json),
 * which hub.installAdapter converts to a GGUF for the loaded base.
 */
export const HubAdapterFile = HubFile.extend({ kind: z.enum(["gguf", "peft"]) });
export type HubAdapterFile = z.infer<typeof HubAdapterFile>;

/** A repo's adapters that fit the loaded base, with why they match. */
export const HubAdapterMatch = z.object({
  repo: RepoId,
  files: z.array(HubAdapterFile),
  reason: z.string(),
});
export type HubAdapterMatch = z.infer<typeof HubAdapterMatch>;

export const HubRepo = z.object({
  repo: RepoId,
  gated: z.boolean(),
  baseModel: z.string().nullable(),
  /** GGUF files only; empty for a repo with none (the UI says so). */
  files: z.array(HubFile),
});
export type HubRepo = z.infer<typeof HubRepo>;

export const ModelTier = z.enum(["small", "medium", "large", "tall"]);

/** The curated first-run list. */
export const RecommendedModel = z.object({
  repo: RepoId,
  /** The quantization to offer first. */
  quant: z.string(),
  label: z.string(),
  tier: ModelTier,
  approxSizeBytes: z.number().int().nonnegative(),
  note: z.string(),
});
export type RecommendedModel = z.infer<typeof RecommendedModel>;

export const DownloadState = z.enum([
  "queued",
  "downloading",
  "paused",
  "verifying",
  "done",
  "error",
  "cancelled",
  /** Downloaded, but the hub lists no sha256 to check it against: kept aside until the user accepts it (hub.acceptUnverified). */
  "unverified",
]);

export const Download = z.object({
  id: z.string(),
  repo: z.string(),
  /** The first (or only) file. */
  file: z.string(),
  kind: z.enum(["model", "adapter"]),
  state: DownloadState,
  totalBytes: z.number().nonnegative(),
  downloadedBytes: z.number().nonnegative(),
  bytesPerSecond: z.number().nonnegative(),
  etaSeconds: z.number().nonnegative().nullable(),
  /** Where the model lands (the first part for split GGUFs). */
  path: z.string(),
  error: z.string().nullable(),
  startedAt: z.number().int(),
  /** In the `unverified` state: each unchecked part with the sha256 it arrived with. */
  unverified: z.array(z.object({ file: z.string(), sha256: z.string() })).optional(),
});
export type Download = z.infer<typeof Download>;

/** A model file in the data folder's models/ (downloaded or placed there). */
export const LocalModel = z.object({
  path: z.string(),
  fileName: z.string(),
  name: z.string(),
  architecture: z.string(),
  /** Parameter count from the tensors' shapes. */
  parameters: z.number().int().nonnegative(),
  quant: z.string().nullable(),
  sizeBytes: z.number().int().nonnegative(),
  contextLength: z.number().int().nonnegative(),
  /** The hub repo it came from, when downloaded in-app. */
  repo: z.string().nullable(),
  modifiedAt: z.number().int(),
});
export type LocalModel = z.infer<typeof LocalModel>;

/** Defaults for a family of models (the Tall base: a ~50B Qwen mixture-of-experts). */
export const ModelProfile = z.object({
  id: z.string(),
  label: z.string(),
  /** What hardware it needs, for the user. */
  hardware: z.string(),
  defaults: LoadSettings,
  notes: z.array(z.string()),
});
export type ModelProfile = z.infer<typeof ModelProfile>;

export const EngineBuild = z.object({
  state: z.enum(["prebuilt", "building", "built", "failed"]),
  /** Which llama.cpp binaries the engine runs now. */
  using: z.enum(["prebuilt", "local"]),
  /** 0..1 while building (from the build's own step counter). */
  progress: z.number().min(0).max(1).nullable(),
  /** The last build output lines (failure reason included). */
  log: z.array(z.string()),
  error: z.string().nullable(),
});
export type EngineBuild = z.infer<typeof EngineBuild>;
