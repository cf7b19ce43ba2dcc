/** Values of the hub's API types for unit tests: plain defaults, a test passes what it is about. */
import type {
  Download,
  EngineBuild,
  FitEstimate,
  HubFile,
  HubModel,
  HubRepo,
  LoadSettings,
  LocalModel,
  RecommendedModel,
} from "../../../electron/api";

const GB = 1024 ** 3;

/** A download of o/m's Q4_K_M file, 100 bytes, not started. */
export function download(over: Partial<Download> = {}): Download {
  return {
    id: "d1",
    repo: "o/m",
    file: "m-Q4_K_M.gguf",
    kind: "model",
    state: "queued",
    totalBytes: 100,
    downloadedBytes: 0,
    bytesPerSecond: 0,
    etaSeconds: null,
    path: "/data/models/m-Q4_K_M.gguf",
    error: null,
    startedAt: 1,
    ...over,
  };
}

/** A single-part model file of `gb` GB. */
export function hubFile(path: string, quant: string | null, gb: number): HubFile {
  const sizeBytes = Math.round(gb * GB);
  return { path, quant, sizeBytes, parts: [{ path, sizeBytes, sha256: null }], isAdapter: false };
}

export function hubRepo(over: Partial<HubRepo> = {}): HubRepo {
  return {
    repo: "o/m",
    gated: false,
    baseModel: null,
    files: [hubFile("m-Q4_K_M.gguf", "Q4_K_M", 1), hubFile("m-Q8_0.gguf", "Q8_0", 2)],
    ...over,
  };
}

export function hubModel(repo: string, over: Partial<HubModel> = {}): HubModel {
  return {
    repo,
    downloads: 10,
    likes: 1,
    updatedAt: null,
    gated: false,
    tags: ["gguf"],
    baseModel: null,
    ...over,
  };
}

export function recommended(repo: string, over: Partial<RecommendedModel> = {}): RecommendedModel {
  return { repo, quant: "Q4_K_M", label: repo, tier: "small", approxSizeBytes: GB, note: "", ...over };
}

/** A CPU-only 16 GB machine (8 GB free) running a 1 GB model at 4,096 tokens. */
export function fitEstimate(over: Partial<FitEstimate> = {}): FitEstimate {
  return {
    contextSize: 4096,
    gpuLayers: 0,
    totalLayers: 24,
    ramBytes: GB,
    vramBytes: 0,
    maxContextSize: 32768,
    trainContextSize: 32768,
    machine: {
      ramTotalBytes: 16 * GB,
      ramFreeBytes: 8 * GB,
      vramTotalBytes: 0,
      vramFreeBytes: 0,
      gpu: null,
      cpuCores: 2,
    },
    fits: true,
    summary: "Fits: 1 GB of 16 GB RAM",
    ...over,
  };
}

export function localModel(over: Partial<LocalModel> = {}): LocalModel {
  return {
    path: "/data/models/m-Q4_K_M.gguf",
    fileName: "m-Q4_K_M.gguf",
    name: "M",
    architecture: "llama",
    parameters: 1_000_000_000,
    quant: "Q4_K_M",
    sizeBytes: GB,
    contextLength: 32768,
    repo: "o/m",
    modifiedAt: 1,
    ...over,
  };
}

export function loadSettings(over: Partial<LoadSettings> = {}): LoadSettings {
  return {
    contextSize: null,
    gpuLayers: "auto",
    flashAttention: "auto",
    kvCacheType: "f16",
    batchSize: null,
    threads: null,
    ...over,
  };
}

export function engineBuild(over: Partial<EngineBuild> = {}): EngineBuild {
  return { state: "prebuilt", using: "prebuilt", progress: null, log: [], error: null, ...over };
}
