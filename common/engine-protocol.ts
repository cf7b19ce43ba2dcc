/**
 * Messages between core (parent) and the engine process (child). The channel is Node's
 * process IPC (child_process.fork) or Electron's utilityProcess parentPort; both carry
 * structured-clonable objects. Every request has an `id`; replies echo it.
 *
 * Requests are defined once, as the strict zod schemas of common/engine-request-schema.ts (each
 * field documented there); their types, exported here, are those schemas' output. What the
 * engine sends back is typed below and checked on arrival by common/engine-message-schema.ts,
 * whose compile-time check fails the typecheck when a schema and its type differ at any depth.
 */
import type { EngineRequest, KvCacheType } from "./engine-request-schema";

export type {
  AdapterUse,
  ChatTurn,
  EngineRequest,
  FitSource,
  GenerateOptions,
  GpuLayersSetting,
  KvCacheType,
  KvPolicy,
  LoadOptions,
  RepeatPenaltyOptions,
  ToolCallFormat,
  ToolCallRecord,
  ToolChoice,
  ToolDefinition,
} from "./engine-request-schema";

/** A call the model made, its arguments parsed (grammar-constrained to the tool's schema). */
export interface ToolCallOut {
  name: string;
  arguments: unknown;
}

/** One generated token's log-probability (OpenAI's `logprobs.content[]`). */
export interface TokenLogprob {
  /** The token's text (may be part of a UTF-8 character: then see `bytes`). */
  token: string;
  logprob: number;
  bytes: number[];
  /** The most likely tokens at this position, most likely first (`logprobs.top` of them). */
  top: { token: string; logprob: number; bytes: number[] }[];
}

/** Embeddings with the token count of each input (for /v1/embeddings usage). */
export interface EmbedResult {
  vectors: number[][];
  /** Tokens of each input as embedded (BOS/EOS not counted). */
  tokens: number[];
}

/** Inputs for /v1/embeddings are refused above this many tokens (the embedding context, less BOS/EOS). */
export const EMBEDDING_MAX_TOKENS = 2045;

/** Memory on this machine, as the engine sees it (electron/api/hub.ts MachineMemory). */
export interface MachineMemory {
  ramTotalBytes: number;
  ramFreeBytes: number;
  vramTotalBytes: number;
  vramFreeBytes: number;
  gpu: string | null;
  cpuCores: number;
}

/** node-llama-cpp's estimate for one configuration (electron/api/hub.ts FitEstimate). */
export interface FitResult {
  contextSize: number;
  gpuLayers: number;
  totalLayers: number;
  ramBytes: number;
  vramBytes: number;
  maxContextSize: number;
  trainContextSize: number;
  machine: MachineMemory;
  fits: boolean;
  summary: string;
  /** What the profiles match on (general.architecture, expert counts, size). */
  model: FitModelFacts;
}

export interface FitModelFacts {
  architecture: string;
  name: string | null;
  parameters: number;
  fileBytes: number;
  /** `<arch>.expert_count` / `<arch>.expert_used_count`; null for dense models. */
  expertCount: number | null;
  expertUsedCount: number | null;
  /** Size of one attention key head (`attention.key_length`, else embedding / heads); a quantized KV cache needs a multiple of 32. */
  headSize?: number | null;
}

/** Which llama.cpp binaries the engine process runs. */
export interface EngineInfo {
  buildType: "localBuild" | "prebuilt";
  gpu: string | null;
  llamaCpp: string;
}

export interface LoadedModel {
  path: string;
  /** Tokens per sequence, as created. */
  contextSize: number;
  gpu: string | null;
  threads: number;
  trainContextSize: number;
  /** What the model was actually loaded with (absent from fakes and older engines). */
  settings?: LoadedSettings;
}

/** The settings in use after a load: every "decide at load time" resolved. */
export interface LoadedSettings {
  contextSize: number;
  sequences: number;
  gpuLayers: number;
  totalLayers: number;
  /** "auto" only on a GPU, where llama.cpp decides per model. */
  flashAttention: "auto" | "on" | "off";
  kvCacheType: KvCacheType;
  batchSize: number;
  threads: number;
  /**
   * The weights are mapped from the model's file (true) or were read into memory (false; see
   * native/engine/llama-backend.ts, weightsInMemory). Absent from older engines.
   */
  mmap?: boolean;
}

export interface GenerateResult {
  /** The text before any tool call. */
  text: string;
  /** "toolCalls": the model called tools (`toolCalls`); run them and continue with the results. */
  stopReason: "eos" | "maxTokens" | "stop" | "abort" | "toolCalls";
  /** The calls the model made, in order (only with stopReason "toolCalls"). */
  toolCalls?: ToolCallOut[];
  /**
   * With stopReason "maxTokens": the tool call the limit cut off, its arguments as far as they
   * were written (JSON not yet complete), so a client sees what was generated.
   */
  cutOffCall?: { name: string; arguments: string };
  tokens: number;
  ttftMs: number | null;
  durationMs: number;
  /** Tokens evaluated for the prompt on this call (low when the KV cache was reused). */
  promptTokensEvaluated: number;
  /** The prompt's length in tokens, exactly as laid out (for usage counts). */
  promptTokens?: number;
  /** With stopReason "stop": which of GenerateOptions.stop ended the answer. */
  stopSequence?: string;
  /** With GenerateOptions.logprobs: one entry per generated token. */
  logprobs?: TokenLogprob[];
  contextTokens: number;
  contextSize: number;
}

/** What the engine answers to each request type: the `value` of its "result" message. */
export interface EngineReplies {
  load: LoadedModel;
  unload: null;
  generate: GenerateResult;
  abort: { aborted: boolean };
  ping: { pid: number };
  embed: number[][];
  embedCounted: EmbedResult;
  countTokens: number[];
  complete: GenerateResult;
  forget: { deletedFiles: number };
  fit: FitResult;
  info: EngineInfo;
}

export type EngineRequestType = EngineRequest["type"];

/** The reply to a request of type `K`. */
export type EngineReply<K extends EngineRequestType> = EngineReplies[K];

/** Engine → core; checked on arrival by common/engine-message-schema.ts. */
export type EngineMessage =
  /** Sent once when the process is ready to take requests. */
  | { type: "ready"; pid: number }
  | { type: "progress"; id: number; progress: number }
  /**
   * Streamed text of generation `id` (unless it asked for `stream: false`): one or more tokens'
   * text, merged per few ms by the engine (DeltaBatcher); all of them are sent before the result.
   */
  | { type: "token"; id: number; text: string }
  /**
   * `value`: the EngineReply of the type of request `id` (unknown on the wire: the supervisor
   * pairs it with its request by id and checks it there against that type's reply,
   * common/engine-message-schema.ts).
   */
  | { type: "result"; id: number; value: unknown }
  | { type: "error"; id: number; code: EngineErrorCode; message: string };

export type EngineErrorCode =
  | "model_load_failed"
  | "no_model"
  | "busy"
  | "invalid_request"
  /** An adapter file that is missing, not a LoRA, or made for another base; the engine keeps working. */
  | "adapter_failed"
  /** The prompt (or an embedding input) does not fit the context; nothing was generated. */
  | "context_length_exceeded"
  /** Its caller stopped the request (an abort naming it) before it was done; nothing is returned. */
  | "aborted"
  | "internal";
