import type {
  AdapterUse,
  ChatTurn,
  ToolCallFormat,
  ToolCallOut,
  ToolCallRecord,
  ToolChoice,
  ToolDefinition,
  EmbedResult,
  EngineInfo,
  FitResult,
  FitSource,
  GenerateOptions,
  GenerateResult,
  GpuLayersSetting,
  KvPolicy,
  LoadedModel,
  LoadedSettings,
  LoadOptions,
  RepeatPenaltyOptions,
  TokenLogprob,
} from "../../../common/engine-protocol";

export type {
  AdapterUse,
  ChatTurn,
  ToolCallFormat,
  ToolCallOut,
  ToolCallRecord,
  ToolChoice,
  ToolDefinition,
  EmbedResult,
  EngineInfo,
  FitResult,
  FitSource,
  GenerateOptions,
  GenerateResult,
  GpuLayersSetting,
  KvPolicy,
  LoadedModel,
  LoadedSettings,
  LoadOptions,
  RepeatPenaltyOptions,
  TokenLogprob,
};

/** What a fit estimate is asked for (besides the file): see native/engine/fit-estimate.ts. */
export interface FitOptions {
  contextSize?: number;
  gpuLayers?: GpuLayersSetting;
  flashAttention?: LoadOptions["flashAttention"];
  kvCacheType?: LoadOptions["kvCacheType"];
  /** KV caches the load would allocate (default: the engine's 4). */
  sequences?: number;
}

/**
 * How core talks to the engine, whatever process it runs in. Implemented by
 * EngineSupervisor (a supervised child process) and usable with any fake in unit tests.
 */
export interface EngineClient {
  /**
   * Load a model (replacing the current one) with `options` (absent fields: decided at load
   * time). Rejects with ApiError("model_load_failed").
   */
  load(path: string, onProgress?: (p: number) => void, options?: LoadOptions): Promise<LoadedModel>;
  /**
   * Free the loaded model (memory back to the system; the conversations' caches are saved). The
   * engine stays up and a later load works as usual. Absent: the engine cannot unload.
   */
  unload?(): Promise<void>;
  /**
   * Memory estimate of a GGUF (local or remote header) on this machine; loads nothing
   * (optional: fakes need not implement it).
   */
  fit?(source: FitSource, options?: FitOptions): Promise<FitResult>;
  /** Which llama.cpp binaries the engine runs (optional, like fit). */
  info?(): Promise<EngineInfo>;
  /**
   * Start a fresh engine process (e.g. to pick up llama.cpp built for this machine) and reload
   * the model with the same options (optional, like fit).
   */
  relaunch?(): Promise<void>;
  /**
   * Generate an answer. `onToken` gets each text piece. Aborting `signal` ends the generation
   * early and resolves with stopReason "abort". Rejects with ApiError("engine_crashed") if
   * the engine process dies mid-way (the supervisor restarts it and reloads the model).
   */
  generate(
    history: ChatTurn[],
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult>;
  /** Embeddings of `texts` under the base model (one vector per text), for the router. */
  embed(texts: string[]): Promise<number[][]>;
  /**
   * Embeddings with each input's token count (/v1/embeddings). Rejects with
   * ApiError("context_length_exceeded") for an input over EMBEDDING_MAX_TOKENS (optional: fakes
   * need not implement it). Aborting `signal` stops the work (ApiError "aborted"). With
   * `truncate`, a long input is cut to its first EMBEDDING_MAX_TOKENS tokens instead.
   */
  embedCounted?(texts: string[], signal?: AbortSignal, truncate?: boolean): Promise<EmbedResult>;
  /**
   * Each text's token count under the loaded model's tokenizer (optional: without it, counts
   * are estimates). Rejects with ApiError("no_model") when no model is loaded.
   */
  countTokens?(texts: string[]): Promise<number[]>;
  /**
   * Continue a raw prompt without the chat template (/v1/completions); like generate otherwise
   * (optional, like embedCounted).
   */
  complete?(
    prompt: string,
    options: GenerateOptions,
    onToken: (text: string) => void,
    signal?: AbortSignal,
  ): Promise<GenerateResult>;
  /**
   * Drop a deleted conversation's cached KV, live and saved under `stateDir` (optional: fakes
   * and engines without a cache need not implement it).
   */
  forget?(sessionKey: string, stateDir?: string): Promise<void>;
  /**
   * True when generate/complete may be called again before the last call settled: the engine
   * runs them together (same adapter set, one sequence each) or queues them itself
   * (ARCHITECTURE.md, "Batched serving"). Absent: one at a time, a second is refused "busy".
   */
  readonly concurrentGenerations?: boolean;
  /** The model that is loaded (or being reloaded after a crash), if any. */
  readonly loaded: LoadedModel | null;
  /** Subscribe to restarts/crashes: "crashed" then "ready" again. */
  onLifecycle(listener: (event: EngineLifecycleEvent) => void): () => void;
  close(): Promise<void>;
}

export type EngineLifecycleEvent =
  | { type: "crashed"; reason: string }
  | { type: "restarted" }
  | { type: "model-reloaded"; model: LoadedModel }
  | { type: "reload-failed"; message: string }
  /** Crashed too often in a short time: not restarted until the next explicit load(). */
  | { type: "gave-up"; message: string };

/**
 * Starts one engine process. Headless: child_process.fork; Electron: utilityProcess.fork.
 * Injected into the supervisor so that core never imports electron.
 */
export interface EngineProcess {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(): void;
  readonly pid: number | undefined;
}
export type SpawnEngine = () => EngineProcess;
