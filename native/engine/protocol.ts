/**
 * Messages between core (parent) and the engine process (child). The channel is Node's
 * process IPC (child_process.fork) or Electron's utilityProcess parentPort; both carry
 * structured-clonable objects. Every request has an `id`; replies echo it.
 */

export interface ChatTurn {
  role: "system" | "user" | "assistant";
  text: string;
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
  jsonSchema?: object;
  /**
   * The conversation this generation continues (core passes the conversation id). The engine
   * keeps a KV cache per (sessionKey, adapter set) in its sequences and, with a `stateDir`,
   * on disk, so reopening a conversation evaluates only its new tokens. Absent: a shared cache.
   */
  sessionKey?: string;
}

export type EngineRequest =
  | {
      id: number;
      type: "load";
      path: string;
      contextSize?: number;
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
    }
  | { id: number; type: "unload" }
  | {
      id: number;
      type: "generate";
      /** Full history ending with the user turn to answer. */
      history: ChatTurn[];
      options: GenerateOptions;
    }
  /** Abort the generation started by request `target`. The generation then ends with reason "abort". */
  | { id: number; type: "abort"; target: number }
  | { id: number; type: "ping" }
  /** Mean-pooled embeddings of each text under the base model (no adapters): for the router. */
  | { id: number; type: "embed"; texts: string[] }
  /**
   * Drop a conversation's cached KV (live sequences and saved state files in `stateDir`): its
   * conversation was deleted, and the cache holds its tokens.
   */
  | { id: number; type: "forget"; sessionKey: string; stateDir?: string };

export interface LoadedModel {
  path: string;
  contextSize: number;
  gpu: string | null;
  threads: number;
  trainContextSize: number;
}

export interface GenerateResult {
  text: string;
  stopReason: "eos" | "maxTokens" | "stop" | "abort";
  tokens: number;
  ttftMs: number | null;
  durationMs: number;
  /** Tokens evaluated for the prompt on this call (low when the KV cache was reused). */
  promptTokensEvaluated: number;
  contextTokens: number;
  contextSize: number;
}

export type EngineMessage =
  /** Sent once when the process is ready to take requests. */
  | { type: "ready"; pid: number }
  | { type: "progress"; id: number; progress: number }
  | { type: "token"; id: number; text: string }
  | { type: "result"; id: number; value: unknown }
  | { type: "error"; id: number; code: EngineErrorCode; message: string };

export type EngineErrorCode =
  | "model_load_failed"
  | "no_model"
  | "busy"
  | "invalid_request"
  /** An adapter file that is missing, not a LoRA, or made for another base; the engine keeps working. */
  | "adapter_failed"
  | "internal";
