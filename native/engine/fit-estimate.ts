import { stat } from "node:fs/promises";
import {
  GgmlType,
  GgufInsights,
  InsufficientMemoryError,
  readGgufFileInfo,
  type GgufFileInfo,
  type Llama,
} from "node-llama-cpp";
import { kvCacheTypes, machineMemory, ramReserveBytes, resolveFlashAttention } from "./llama-backend";
import type {
  FitModelFacts,
  FitResult,
  FitSource,
  GpuLayersSetting,
  KvCacheType,
  LoadOptions,
} from "../../common/engine-protocol";

/**
 * The context a load gets when none is asked for: the training context, at most this many
 * tokens per sequence, less when the memory that is free holds less. 8k is enough for long
 * chats without tying up gigabytes of KV cache per sequence on a big model; larger contexts are
 * a setting (up to the training context).
 */
export const DEFAULT_CONTEXT_CAP = 8192;
/** Below this many tokens a default context is not worth having: a load falls back to 1 sequence. */
export const MIN_DEFAULT_CONTEXT = 2048;
/**
 * The most sequences a context gets when a load does not say: as many generations at once
 * (batched serving; 8 clients decode ~1.5× the tokens per second of 4 on the bench model, see
 * bench/README.md "parallel"), and room for "sequence-per-set" to keep a few adapter sets'
 * caches. The context starts with one and grows as requests come (ModelSession.grow).
 */
export const DEFAULT_SEQUENCES = 8;
/**
 * The share of memory a load that names no sequence count lets its KV caches take: of the RAM
 * (VRAM, with a GPU) free before the load, less the model's weights. Each sequence is a full
 * context of KV cells, so the count is chosen here instead of always DEFAULT_SEQUENCES: the
 * bench model's 8 × 8k (~2.3 GB) fits on a machine with 10 GB to spare; an 8B model's 1 GB per
 * 8k sequence on 12 GB free with 5 GB of weights gets 1 (one chat, API requests one at a time).
 */
export const KV_MEMORY_SHARE = 0.25;

/**
 * The sequences `MACARON_ENGINE_SEQUENCES` sets for a load that names none (1–64: fewer for less
 * memory, more for more parallel API clients); null when unset or invalid, and then the load
 * takes up to the engine's DEFAULT_SEQUENCES, as many as the free memory allows (fittingSequences).
 */
export function sequencesSetting(env: NodeJS.ProcessEnv = process.env): number | null {
  const value = Number(env.MACARON_ENGINE_SEQUENCES ?? "");
  return Number.isInteger(value) && value >= 1 && value <= 64 ? value : null;
}

/** The default context of a model with this training context (before memory is considered). */
export function defaultContextSize(trainContextSize: number): number {
  return Math.min(trainContextSize, DEFAULT_CONTEXT_CAP);
}

export interface FitRequest {
  source: FitSource;
  contextSize?: number;
  gpuLayers?: GpuLayersSetting;
  sequences?: number;
  flashAttention?: LoadOptions["flashAttention"];
  kvCacheType?: KvCacheType;
}

/** Read a GGUF's header (a local file, or the first bytes of a remote one). */
export async function readFileInfo(source: FitSource, signal?: AbortSignal): Promise<GgufFileInfo> {
  if ("path" in source) {
    return readGgufFileInfo(source.path, { sourceType: "filesystem", logWarnings: false, signal });
  }
  return readGgufFileInfo(source.url, {
    sourceType: "network",
    fetchHeaders: source.headers,
    logWarnings: false,
    fetchRetryOptions: { retries: 2 },
    signal,
  });
}

/**
 * The bytes of a local model's weights, over every part of a split model (`path` is its first
 * part; node-llama-cpp splices the parts' tensor info), or 0 when the file cannot be read.
 */
export async function weightBytes(path: string): Promise<number> {
  try {
    return (await GgufInsights.from(await readFileInfo({ path }))).modelSize;
  } catch {
    return 0;
  }
}

/**
 * node-llama-cpp's memory estimate (GgufInsights; with a llama.cpp backend it simulates the
 * allocations without making them) for one configuration on this machine: the model's weights
 * on CPU and GPU, plus `sequences` KV caches of `contextSize` tokens and the compute buffers.
 */
export async function estimateFit(llama: Llama, gpu: string | null, request: FitRequest): Promise<FitResult> {
  const info = await readFileInfo(request.source);
  const insights = await GgufInsights.from(info, llama);
  const totalLayers = insights.totalLayers;
  const trainContextSize = insights.trainContextSize ?? 4096;
  const kvCacheType = request.kvCacheType ?? "f16";
  const flashAttention = resolveFlashAttention(request.flashAttention, kvCacheType, gpu);
  const machine = await machineMemory(llama, gpu);
  // As a load would allocate: the count asked for, else the setting, else as many as the free
  // memory allows (measured now: with another model loaded, which a load unloads first, the
  // count may come out lower than that load's).
  const sequences =
    request.sequences ??
    sequencesSetting() ??
    (await fittingSequences(
      insights,
      gpu,
      { contextSize: request.contextSize, flashAttention, kvCacheType, max: DEFAULT_SEQUENCES },
      machine,
    ));
  const kv = kvCacheTypes(kvCacheType, flashAttention);
  const kvCacheKeyType = GgmlType[kv.key];
  const kvCacheValueType = GgmlType[kv.value];
  const wanted = request.contextSize ?? defaultContextSize(trainContextSize);
  const gpuLayers = await resolveGpuLayers(insights, request.gpuLayers ?? "auto", gpu, wanted * sequences);
  const contextOptions = {
    modelGpuLayers: gpuLayers,
    modelTrainContextSize: trainContextSize,
    flashAttention,
    kvCacheKeyType,
    kvCacheValueType,
    sequences,
  };
  const resolver = insights.configurationResolver;
  const largestFitting = async (max: number): Promise<number> => {
    try {
      return await resolver.resolveContextContextSize({ max, min: 256 }, contextOptions);
    } catch (error) {
      if (error instanceof InsufficientMemoryError) return 0;
      throw error;
    }
  };
  const maxContextSize = await largestFitting(trainContextSize);
  // Without a context asked for, the one a load would pick: the default, less if memory is short.
  const contextSize =
    request.contextSize ??
    (maxContextSize >= Math.min(wanted, MIN_DEFAULT_CONTEXT) ? Math.min(wanted, maxContextSize) : wanted);
  const model = await insights.estimateModelResourceRequirementsV2({ gpuLayers });
  const context = await contextEstimate(insights, { contextSize, gpuLayers, sequences, flashAttention, kv });
  const ramBytes = model.cpuRam + context.cpuRam;
  const vramBytes = model.gpuVram + context.gpuVram;
  const fits = ramBytes <= machine.ramFreeBytes && (vramBytes === 0 || vramBytes <= machine.vramFreeBytes);
  return {
    contextSize,
    gpuLayers,
    totalLayers,
    ramBytes,
    vramBytes,
    maxContextSize,
    trainContextSize,
    machine,
    fits,
    summary: fitSummary({ fits, ramBytes, vramBytes, machine }),
    model: await modelFacts(info, insights, request.source),
  };
}

async function resolveGpuLayers(
  insights: GgufInsights,
  setting: GpuLayersSetting,
  gpu: string | null,
  fitTokens: number,
): Promise<number> {
  if (gpu === null) return 0;
  if (setting === "max") return insights.totalLayers;
  if (typeof setting === "number") return Math.min(setting, insights.totalLayers);
  const resolved = await insights.configurationResolver.resolveModelGpuLayersV2({
    fitContext: { contextSize: fitTokens },
  });
  return resolved.gpuLayers;
}

async function modelFacts(
  info: GgufFileInfo,
  insights: GgufInsights,
  source: FitSource,
): Promise<FitModelFacts> {
  const architecture = String(info.metadata.general?.architecture ?? "unknown");
  const archMetadata = (info.metadata as Record<string, unknown>)[architecture] as
    Record<string, unknown> | undefined;
  const count = (key: string): number | null => {
    const value = archMetadata?.[key];
    return typeof value === "number" && value > 0 ? value : null;
  };
  let fileBytes = insights.modelSize;
  if ("path" in source) fileBytes = (await stat(source.path).catch(() => null))?.size ?? fileBytes;
  return {
    architecture,
    name: typeof info.metadata.general?.name === "string" ? info.metadata.general.name : null,
    parameters: insights.totalParameters,
    fileBytes,
    expertCount: count("expert_count"),
    expertUsedCount: count("expert_used_count"),
    headSize: headSizeOf(archMetadata),
  };
}

/** `attention.key_length`, else embedding_length / attention.head_count; null when the header says neither. */
export function headSizeOf(arch: Record<string, unknown> | undefined): number | null {
  const attention = (arch?.attention ?? {}) as Record<string, unknown>;
  const positive = (value: unknown): number | null => (typeof value === "number" && value > 0 ? value : null);
  const keyLength = positive(attention.key_length);
  if (keyLength !== null) return keyLength;
  const embedding = positive(arch?.embedding_length);
  const heads = positive(attention.head_count);
  return embedding !== null && heads !== null ? embedding / heads : null;
}

const GB = 1e9;
const gb = (bytes: number): string => `${(bytes / GB).toFixed(bytes < 10 * GB ? 1 : 0)} GB`;

/** One line for the user: "Fits: 3.1 GB of 15.6 GB free RAM" / "Needs 41 GB RAM, 16 GB is free". */
export function fitSummary(fit: {
  fits: boolean;
  ramBytes: number;
  vramBytes: number;
  machine: { ramFreeBytes: number; vramFreeBytes: number };
}): string {
  const { machine } = fit;
  const vram = fit.vramBytes > 0 ? `, ${gb(fit.vramBytes)} of ${gb(machine.vramFreeBytes)} free VRAM` : "";
  if (fit.fits) return `Fits: ${gb(fit.ramBytes)} of ${gb(machine.ramFreeBytes)} free RAM${vram}`;
  const short: string[] = [];
  if (fit.ramBytes > machine.ramFreeBytes)
    short.push(`${gb(fit.ramBytes)} RAM, this machine has ${gb(machine.ramFreeBytes)} free`);
  if (fit.vramBytes > machine.vramFreeBytes)
    short.push(`${gb(fit.vramBytes)} VRAM, the GPU has ${gb(machine.vramFreeBytes)} free`);
  return `Needs ${short.join("; ")}`;
}

/**
 * The largest count in 1..max whose `bytes(count)` fits `budget` (1 whatever it needs: a load
 * without memory for one sequence fails on its own, with its own message). The need grows with
 * the count, so `max` is asked first (it fits on most machines: one estimate), then the rest is
 * halved: ~log2(max) estimates, each a simulated allocation in node-llama-cpp.
 */
export async function sequencesWithin(
  max: number,
  budget: { ram: number; vram: number },
  bytes: (sequences: number) => Promise<{ ram: number; vram: number }>,
): Promise<number> {
  const fits = async (n: number): Promise<boolean> => {
    const need = await bytes(n);
    return need.ram <= budget.ram && need.vram <= budget.vram;
  };
  if (max <= 1 || (await fits(max))) return Math.max(1, max);
  // The answer lies in [low, high]; 1 needs no asking.
  let low = 1;
  let high = max - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (await fits(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * The sequences a load that names none gets: up to `max`, as many as fit KV_MEMORY_SHARE of the
 * memory left after the model's weights and the RAM reserve (`MACARON_ENGINE_RAM_RESERVE_MB`),
 * from node-llama-cpp's estimates on the GGUF header. With a GPU every layer is assumed on it: a
 * model that does not fit there whole gets 1. `free` is measured before the load.
 */
export async function fittingSequences(
  insights: GgufInsights,
  gpu: string | null,
  options: { contextSize?: number; flashAttention: boolean | "auto"; kvCacheType: KvCacheType; max: number },
  free: { ramFreeBytes: number; vramFreeBytes: number },
): Promise<number> {
  const gpuLayers = gpu === null ? 0 : insights.totalLayers;
  const kv = kvCacheTypes(options.kvCacheType, options.flashAttention);
  const train = insights.trainContextSize ?? 4096;
  const contextSize = Math.min(train, options.contextSize ?? defaultContextSize(train));
  const model = await insights.estimateModelResourceRequirementsV2({ gpuLayers });
  const reserve = ramReserveBytes() ?? 0;
  const budget = {
    ram: Math.max(0, free.ramFreeBytes - reserve - model.cpuRam) * KV_MEMORY_SHARE,
    vram: gpu === null ? 0 : Math.max(0, free.vramFreeBytes - model.gpuVram) * KV_MEMORY_SHARE,
  };
  const { flashAttention } = options;
  return sequencesWithin(options.max, budget, async (sequences) => {
    const context = await contextEstimate(insights, {
      contextSize,
      gpuLayers,
      sequences,
      flashAttention,
      kv,
    });
    return { ram: context.cpuRam, vram: context.gpuVram };
  });
}

/** node-llama-cpp's estimate of a context's memory (KV caches and compute buffers). */
function contextEstimate(
  insights: GgufInsights,
  c: {
    contextSize: number;
    gpuLayers: number;
    sequences: number;
    flashAttention: boolean | "auto";
    kv: ReturnType<typeof kvCacheTypes>;
  },
): Promise<{ cpuRam: number; gpuVram: number }> {
  return insights.estimateContextResourceRequirementsV2({
    contextSize: c.contextSize,
    modelGpuLayers: c.gpuLayers,
    sequences: c.sequences,
    flashAttention: c.flashAttention,
    kvCacheKeyType: GgmlType[c.kv.key],
    kvCacheValueType: GgmlType[c.kv.value],
  });
}
