/**
 * Messages between core (parent) and the engine process (child). The channel is Node's
 * process IPC (child_process.fork) or Electron's utilityProcess parentPort; both carry
 * structured-clonable objects. Every request has an `id`; replies echo it.
 */

export interface ChatTurn {
  role: "system" | "user" | "assistant";
  text: string;
  /**
   * Assistant turns: the tool calls the model made after `text`, each with the result it was
   * given. Consecutive assistant turns are one model response (text, calls, text, calls, …), as
   * OpenAI's assistant `tool_calls` + `tool` messages are; a trailing assistant turn is continued.
   */
  calls?: ToolCallRecord[];
}

/** A tool call in the history, with what it returned (text or JSON, as shown to the model). */
export interface ToolCallRecord {
  name: string;
  arguments: unknown;
  result: unknown;
}

/** A function the model may call (OpenAI's `tools[].function`). */
export interface ToolDefinition {
  /** ^[a-zA-Z0-9_-]{1,64}$ */
  name: string;
  description?: string;
  /** JSON Schema of the arguments (an object schema); absent = no arguments. */
  parameters?: Record<string, unknown>;
}

/**
 * "auto": the model decides (text or calls); "required": it must call one of the tools; `{name}`:
 * it must call that one. "none" is expressed by passing no tools.
 */
export type ToolChoice = "auto" | "required" | { name: string };

/**
 * A tool-call syntax that overrides the chat wrapper's (node-llama-cpp `settings.functions`), for
 * an adapter trained to call tools in its own format (the demo's Agent writes
 * `{"tool":"set_timer","arguments":{"minutes":15}}`). The call is `callPrefix` + name +
 * `paramsPrefix` + JSON arguments + `callSuffix`; a result is `resultPrefix` + JSON + `resultSuffix`.
 */
export interface ToolCallFormat {
  callPrefix: string;
  paramsPrefix: string;
  callSuffix: string;
  resultPrefix: string;
  resultSuffix: string;
  /**
   * false: no function documentation in the system prompt (the adapter learned its tools); true:
   * the chat wrapper's own documentation; "compact": one short line per tool
   * (native/engine/tool-docs.ts), what the demo Agent is trained on.
   */
  documented: boolean | "compact";
}

/** A call the model made, its arguments parsed (grammar-constrained to the tool's schema). */
export interface ToolCallOut {
  name: string;
  arguments: unknown;
}

/** One LoRA adapter applied to the live context, validated by core before it gets here. */
export interface AdapterUse {
  /** Absolute path of the adapter GGUF. */
  path: string;
  scale: number;
}

/**
 * What happens to the KV cache when the adapter set differs from the one the cached history was
 * evaluated under:
 * - "reevaluate": exact — the history is evaluated again under the new adapters.
 * - "sequence-per-set": one cached sequence per adapter set; exact, costs context memory.
 * - "activated": activated-LoRA style — the cached history is never re-evaluated; adapters
 *   apply only to the tokens after the cached prefix (the new user turn and the answer). Each
 *   cached token keeps the keys/values of the turn that first evaluated it (under the base or
 *   under that turn's adapters), so it is exact only when the cached prefix was evaluated under
 *   the same set or the adapters touch only the output layer (see native/engine/kv-slots.ts).
 */
export type KvPolicy = "reevaluate" | "sequence-per-set" | "activated";

export interface GenerateOptions {
  /** 0 = greedy. */
  temperature: number;
  maxTokens: number;
  /** Extra stop strings (OpenAI `stop`). */
  stop?: string[];
  seed?: number;
  /** Adapters for this generation ([] or absent = the base model alone). */
  adapters?: AdapterUse[];
  kvPolicy?: KvPolicy;
  /**
   * Constrain the answer to JSON matching this schema (node-llama-cpp's JSON-schema grammar).
   * The grammar guarantees syntax only: validate the parsed answer afterwards.
   */
  jsonSchema?: Record<string, unknown>;
  /**
   * The conversation this generation continues (core passes the conversation id). The engine
   * keeps a KV cache per (sessionKey, adapter set) in its sequences and, with a `stateDir`,
   * on disk, so reopening a conversation evaluates only its new tokens. Absent: a shared cache.
   */
  sessionKey?: string;
  /**
   * Functions the model may call (node-llama-cpp function calling: the name and the arguments
   * are grammar-constrained to these definitions). Not together with `jsonSchema`.
   */
  tools?: ToolDefinition[];
  /** Default "auto". */
  toolChoice?: ToolChoice;
  /** More than one call in one answer (default true). */
  parallelToolCalls?: boolean;
  /** The adapter's own call syntax (see ToolCallFormat); absent = the chat wrapper's. */
  toolFormat?: ToolCallFormat;
  /**
   * Samplers, passed to node-llama-cpp as they are (absent: node-llama-cpp's defaults). top-p,
   * top-k and min-p apply only when temperature > 0, as in llama.cpp (greedy decoding ignores
   * them); repeatPenalty and tokenBias adjust the logits before either, so they act on greedy
   * decoding too.
   */
  topP?: number;
  topK?: number;
  minP?: number;
  /** Repetition penalties over the last `lastTokens` tokens (node-llama-cpp `repeatPenalty`). */
  repeatPenalty?: RepeatPenaltyOptions;
  /**
   * Logit biases by token id (OpenAI `logit_bias`: -100..100 added to the logit; -100 = never).
   * Ids outside the vocabulary are refused (invalid_request).
   */
  tokenBias?: Record<number, number>;
  /**
   * Constrain the answer to any JSON value (OpenAI `response_format: json_object`; node-llama-cpp's
   * built-in "json" grammar). Not together with `jsonSchema` or `tools`.
   */
  json?: boolean;
  /**
   * Report the log-probability of each generated token and the `top` most likely alternatives
   * (0..20) at each position, from the model's distribution (temperature 1, before samplers,
   * biases and grammar; see native/engine/logprobs.ts) (GenerateResult.logprobs). The tokens
   * of `text` only: not a tool call's.
   */
  logprobs?: { top: number };
}

export interface RepeatPenaltyOptions {
  /** Multiplicative penalty (llama.cpp `repeat_penalty`; 1 = off). */
  penalty?: number;
  /** OpenAI `frequency_penalty` (-2..2): subtracted per earlier occurrence. */
  frequencyPenalty?: number;
  /** OpenAI `presence_penalty` (-2..2): subtracted once for any earlier occurrence. */
  presencePenalty?: number;
  /** How many recent tokens the penalties look at (default node-llama-cpp's 64). */
  lastTokens?: number;
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

/** KV cache element type (node-llama-cpp's `experimentalKvCacheKeyType/ValueType`). */
export type KvCacheType = "f16" | "q8_0" | "q4_0";

/** "auto": as many layers as fit the GPU (0 without one); "max": all; N: that many. */
export type GpuLayersSetting = "auto" | "max" | number;

/**
 * How a model is loaded. Every field is optional: absent = decided at load time (context from
 * the memory that is free, capped at the training context; flash attention by
 * `flashAttentionFor`; threads from the machine; batch by node-llama-cpp).
 */
export interface LoadOptions {
  /** Tokens per sequence, at most the model's training context. */
  contextSize?: number;
  gpuLayers?: GpuLayersSetting;
  flashAttention?: "auto" | "on" | "off";
  kvCacheType?: KvCacheType;
  batchSize?: number;
  threads?: number;
}

/** A GGUF to estimate: a local file, or a remote one (only its header is read). */
export type FitSource = { path: string } | { url: string; headers?: Record<string, string> };

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

export type EngineRequest =
  | ({
      id: number;
      type: "load";
      path: string;
      /**
       * Context sequences (KV caches) to allocate, each of `contextSize` tokens; the
       * "sequence-per-set" policy keeps one per adapter set. Default 4; 1 saves memory and makes
       * "sequence-per-set" behave like "reevaluate".
       */
      sequences?: number;
      /**
       * Folder (absolute) where conversations' KV states are saved after each answer and
       * restored when a conversation's cache is no longer in a sequence (evicted, reloaded,
       * engine restarted). Absent: nothing is saved. Core passes `<dataDir>/kv`.
       */
      stateDir?: string;
    } & LoadOptions)
  | { id: number; type: "unload" }
  | {
      id: number;
      type: "generate";
      /** Full history ending with the user turn to answer. */
      history: ChatTurn[];
      options: GenerateOptions;
      /** false: no "token" messages, only the result (whose text is the whole answer). Default true. */
      stream?: boolean;
    }
  /** Abort the generation started by request `target`. The generation then ends with reason "abort". */
  | { id: number; type: "abort"; target: number }
  | { id: number; type: "ping" }
  /** Mean-pooled embeddings of each text under the base model (no adapters): for the router. */
  | { id: number; type: "embed"; texts: string[] }
  /**
   * As "embed", with token counts (EmbedResult); a text over EMBEDDING_MAX_TOKENS is refused
   * (context_length_exceeded naming its index) instead of being truncated.
   */
  | { id: number; type: "embedCounted"; texts: string[] }
  /** How many tokens each text is under the loaded model's tokenizer (no special tokens, no BOS). */
  | { id: number; type: "countTokens"; texts: string[] }
  /**
   * Continue a raw prompt (OpenAI /v1/completions): no chat template; the prompt is tokenized as
   * is (with BOS when the model wants one). Same options and result as "generate", except tools
   * (refused) and sessionKey (ignored: a shared cache).
   */
  | { id: number; type: "complete"; prompt: string; options: GenerateOptions; stream?: boolean }
  /**
   * Drop a conversation's cached KV (live sequences and saved state files in `stateDir`): its
   * conversation was deleted, and the cache holds its tokens.
   */
  | { id: number; type: "forget"; sessionKey: string; stateDir?: string }
  /**
   * Memory estimate of a GGUF for a context size and GPU layers on this machine, from its
   * header (GgufInsights); nothing is loaded. `sequences`: as a load would allocate (default 4).
   */
  | {
      id: number;
      type: "fit";
      source: FitSource;
      contextSize?: number;
      gpuLayers?: GpuLayersSetting;
      sequences?: number;
      flashAttention?: "auto" | "on" | "off";
      kvCacheType?: KvCacheType;
    }
  /** Which binaries llama.cpp runs from (prebuilt or built for this machine). */
  | { id: number; type: "info" };

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
  | "internal";
