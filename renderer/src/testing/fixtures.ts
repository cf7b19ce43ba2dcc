/**
 * Values of the core API's types for unit tests: each has plain defaults, and a test passes
 * only what it is about.
 */
import type {
  AdapterInfo,
  AdapterVersionInfo,
  EngineStatus,
  GateProgress,
  Message,
  ModelInfo,
} from "../../../electron/api";

/** An engine with a model loaded (a 512-token llama). */
export function readyEngine(model: Pick<ModelInfo, "path" | "name" | "isDemo">): EngineStatus {
  return {
    state: "ready",
    gpu: null,
    error: null,
    progress: null,
    model: {
      architecture: "llama",
      sizeBytes: 1,
      contextLength: 512,
      embeddingLength: 64,
      blockCount: 2,
      ...model,
    },
  };
}

/** An enabled adapter for a llama base with 64-dim embeddings, fitting the loaded model. */
export function adapterInfo(id: string, name: string, over: Partial<AdapterInfo> = {}): AdapterInfo {
  return {
    id,
    name,
    domain: id,
    version: "1.0.0",
    description: "",
    sha256: "0",
    sizeBytes: 1760,
    enabled: true,
    scale: 1,
    defaultScale: 1,
    base: { architecture: "llama", embeddingLength: 64, baseName: null },
    fitsLoadedModel: true,
    incompatibleReason: null,
    usageCount: 0,
    installedAt: 0,
    lineage: { parent: null, trainedFrom: "test" },
    ...over,
  };
}

/** Version 1.0.0 of "coding", live, its file kept. */
export function versionInfo(over: Partial<AdapterVersionInfo>): AdapterVersionInfo {
  return {
    adapterId: "coding",
    version: "1.0.0",
    status: "live",
    live: true,
    sha256: "ab".repeat(32),
    sizeBytes: 2048,
    source: "install",
    lineage: { parent: null, trainedFrom: "seed" },
    releaseNotes: "",
    installedAt: 0,
    promotedAt: null,
    fileKept: true,
    statusReason: null,
    contract: null,
    ...over,
  };
}

/** The gate running on "coding" 1.1.0, no case done yet. */
export function gateProgress(over: Partial<GateProgress>): GateProgress {
  return {
    adapterId: "coding",
    version: "1.1.0",
    state: "running",
    done: 0,
    total: 6,
    caseId: null,
    failing: [],
    message: null,
    ...over,
  };
}

/** A complete, empty message of conversation "c1", created at 1. */
export function message(over: Partial<Message> & Pick<Message, "id" | "role">): Message {
  return {
    conversationId: "c1",
    content: "",
    status: "complete",
    error: null,
    createdAt: 1,
    stats: null,
    routing: null,
    steps: [],
    rating: null,
    corrected: false,
    memoriesUsed: [],
    context: null,
    ...over,
  };
}
