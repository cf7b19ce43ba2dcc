/**
 * Domain schemas shared by every transport. This folder imports nothing of the project but
 * common/ (the pure code every side shares):
 * the renderer, the preload, core and the headless server all build on it.
 */
import { z } from "zod";
import { MAX_CORS_ORIGIN_LENGTH, MAX_CORS_ORIGINS, parseAllowedOrigin } from "../../common/cors-origins";
import { ModelInfo } from "../../common/model-info";
import { StoredDocument } from "./genui/catalog";
import { MessageInteraction } from "./genui/interaction";
import { KvCacheType } from "./hub";
import { ToolStep } from "./tools";

export const Id = z.string().min(1).max(64);

/** Summary of a GGUF file as read by native/gguf (common/model-info.ts), shown before and after loading. */
export { ModelInfo };

export const EngineState = z.enum(["idle", "loading", "ready", "error", "restarting"]);
export type EngineState = z.infer<typeof EngineState>;

export const EngineStatus = z.object({
  state: EngineState,
  model: ModelInfo.nullable(),
  /** Human-readable reason when state is "error" (e.g. "Not a GGUF file: ..."). */
  error: z.string().nullable(),
  /** GPU backend in use ("cuda", "metal", "vulkan") or null for CPU. */
  gpu: z.string().nullable(),
  /** Model load progress 0..1 while loading. */
  progress: z.number().min(0).max(1).nullable(),
  /** What the loaded model runs with, every "auto" resolved (absent/null without a model). */
  settings: z
    .object({
      contextSize: z.number().int().nonnegative(),
      /** KV caches of contextSize tokens each (adapter sets' caches, see the KV policy). */
      sequences: z.number().int().nonnegative(),
      gpuLayers: z.number().int().nonnegative(),
      totalLayers: z.number().int().nonnegative(),
      flashAttention: z.enum(["auto", "on", "off"]),
      kvCacheType: KvCacheType,
      batchSize: z.number().int().nonnegative(),
      threads: z.number().int().nonnegative(),
      /** Weights mapped from the file (true) or read into memory (false); absent from older engines. */
      mmap: z.boolean().optional(),
    })
    .nullable()
    .optional(),
  /** The context in use: tokens per sequence and the model's training context. */
  context: z
    .object({ size: z.number().int().nonnegative(), trainSize: z.number().int().nonnegative() })
    .nullable()
    .optional(),
});
export type EngineStatus = z.infer<typeof EngineStatus>;

/**
 * Which adapters answer a turn: "auto" (the router decides), one pinned adapter, or a blend of
 * adapters with scales. "base" answers with the frozen base model alone.
 */
export const AdapterSelection = z.union([
  z.literal("auto"),
  z.literal("base"),
  z.object({ pinned: Id }).strict(),
  z.object({ blend: z.record(Id, z.number().min(0).max(2)) }).strict(),
]);
export type AdapterSelection = z.infer<typeof AdapterSelection>;

export const Conversation = z.object({
  id: Id,
  title: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  /** The conversation's adapter choice (a pin or blend the user set), "auto" by default. */
  adapters: AdapterSelection.default("auto"),
});
export type Conversation = z.infer<typeof Conversation>;

export const MessageRole = z.enum(["system", "user", "assistant"]);
export type MessageRole = z.infer<typeof MessageRole>;

/**
 * complete: finished normally; streaming: being generated; stopped: the user pressed Stop
 * (kept as far as it got); error: generation failed (see `error`); interrupted: the process
 * died while it streamed (found on start-up).
 */
export const MessageStatus = z.enum(["complete", "streaming", "stopped", "error", "interrupted"]);
export type MessageStatus = z.infer<typeof MessageStatus>;

export const GenerationStats = z.object({
  tokens: z.number().int().nonnegative(),
  /** Time to first token, ms. */
  ttftMs: z.number().nonnegative().nullable(),
  durationMs: z.number().nonnegative(),
  tokensPerSecond: z.number().nonnegative().nullable(),
  /** Tokens of the context in use after this answer, and the context size. */
  contextTokens: z.number().int().nonnegative().nullable(),
  contextSize: z.number().int().nonnegative().nullable(),
});
export type GenerationStats = z.infer<typeof GenerationStats>;

/** One adapter as it was applied to a turn. */
export const AppliedAdapter = z.object({ id: Id, version: z.string(), scale: z.number() });
export type AppliedAdapter = z.infer<typeof AppliedAdapter>;

/** What the router decided for an assistant turn, shown under the answer and stored with it. */
export const RoutingInfo = z.object({
  mode: z.enum(["auto", "pinned", "blend", "base"]),
  adapters: z.array(AppliedAdapter),
  confidence: z.number().min(0).max(1),
  reason: z.string(),
  latencyMs: z.number().nonnegative(),
});
export type RoutingInfo = z.infer<typeof RoutingInfo>;

/**
 * How an answer is sampled (a turn's, a conversation's or a preset's; absent: the default).
 * maxTokens is also bounded by the loaded model's context, checked where the model is known.
 * The seed is llama.cpp's (32-bit unsigned) and only matters when temperature > 0.
 */
const between = (name: string, min: number, max: number) =>
  z
    .number()
    .min(min, `${name} must be between ${min} and ${max}.`)
    .max(max, `${name} must be between ${min} and ${max}.`);
export const SamplingSettings = z.object({
  temperature: between("Temperature", 0, 2).optional(),
  topP: between("Top-p", 0, 1).optional(),
  topK: z.number().int("Top-k must be a whole number.").min(0, "Top-k must be 0 or more.").optional(),
  minP: between("Min-p", 0, 1).optional(),
  repeatPenalty: between("Repeat penalty", 1, 2).optional(),
  maxTokens: between("Max tokens", 1, 32768).int("Max tokens must be a whole number.").optional(),
  seed: between("The seed", 0, 4_294_967_295).int("The seed must be a whole number.").optional(),
});
export type SamplingSettings = z.infer<typeof SamplingSettings>;

/** The longest system prompt a conversation or preset may have, in characters. */
export const SYSTEM_PROMPT_MAX_CHARS = 20_000;

/** A conversation's own system prompt (null: the app's) and sampling (issue 13). */
export const ConversationSettings = z.object({
  systemPrompt: z.string().max(SYSTEM_PROMPT_MAX_CHARS).nullable(),
  sampling: SamplingSettings.strict(),
});
export type ConversationSettings = z.infer<typeof ConversationSettings>;

/** Named conversation settings that can be applied to any conversation. */
export const SamplingPreset = ConversationSettings.extend({
  id: Id,
  name: z.string().min(1).max(80),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export type SamplingPreset = z.infer<typeof SamplingPreset>;

export const Message = z.object({
  id: Id,
  conversationId: Id,
  role: MessageRole,
  content: z.string(),
  status: MessageStatus,
  error: z.string().nullable(),
  createdAt: z.number().int(),
  stats: GenerationStats.nullable(),
  /** Assistant turns: which adapters answered and how sure the router was. */
  routing: RoutingInfo.nullable().default(null),
  /**
   * Assistant turns: the sampling the answer was generated with (defaults filled in) and its
   * conversation's system prompt (null: the app's default one), from its turn record. Absent
   * or null: unknown (user turns, imported answers).
   */
  generation: z
    .object({ sampling: SamplingSettings, systemPrompt: z.string().nullable() })
    .nullable()
    .optional(),
  /** Assistant turns: the user's latest rating and whether they corrected the answer. */
  rating: z.enum(["good", "bad"]).nullable().default(null),
  corrected: z.boolean().default(false),
  /** Assistant turns: the text of the user's latest correction (Markdown); null or absent: none. */
  correction: z.string().nullable().optional(),
  /** Assistant turns: the long-term memories that were put into the prompt. */
  memoriesUsed: z.array(z.object({ id: Id, text: z.string() })).default([]),
  /**
   * Assistant turns: how the history was fitted into the context window. "full": all of it;
   * "sliding-window": the oldest messages were left out; "summary": they were replaced by a
   * summary. Shown to the user so a long chat never forgets silently.
   */
  context: z
    .object({
      strategy: z.enum(["full", "sliding-window", "summary"]),
      includedMessages: z.number().int().nonnegative(),
      droppedMessages: z.number().int().nonnegative(),
    })
    .nullable()
    .default(null),
  /** Assistant turns: "ui" when answered with generated components (GenUI), else text. */
  format: z.enum(["text", "ui"]).optional(),
  /**
   * A UI answer's validated document (electron/api/genui). Null while it streams (the content
   * then holds the raw JSON so far) or when nothing usable came out; `content` keeps a text
   * rendition for search, copy and export.
   */
  ui: StoredDocument.nullable().optional(),
  /** User turns made by using a component of an answer (a form submitted, an option chosen). */
  interaction: MessageInteraction.nullable().optional(),
  /** Assistant turns: the tool calls of the answer, in order (its trajectory). */
  steps: z.array(ToolStep).default([]),
  /**
   * Versions (edits of a question, answers given again): the ids of this message and its
   * siblings, oldest first, when there is more than one; chat.showVersion shows another.
   */
  versions: z.array(Id).optional(),
});
export type Message = z.infer<typeof Message>;

export const ConversationDetail = z.object({
  conversation: Conversation,
  messages: z.array(Message),
});
export type ConversationDetail = z.infer<typeof ConversationDetail>;

/** An installed specialist adapter, as the Adapters panel shows it. */
export const AdapterInfo = z.object({
  id: Id,
  name: z.string(),
  domain: z.string(),
  version: z.string(),
  description: z.string(),
  sha256: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  enabled: z.boolean(),
  /** The scale used when the adapter answers alone (user-set, starts at the manifest default). */
  scale: z.number().min(0).max(2),
  defaultScale: z.number().min(0).max(2),
  base: z.object({
    architecture: z.string(),
    embeddingLength: z.number().int().nonnegative(),
    baseName: z.string().nullable(),
  }),
  /** Whether it fits the loaded base model (null when no model is loaded), and why not. */
  fitsLoadedModel: z.boolean().nullable(),
  incompatibleReason: z.string().nullable(),
  usageCount: z.number().int().nonnegative(),
  installedAt: z.number().int(),
  lineage: z.object({ parent: z.string().nullable(), trainedFrom: z.string() }),
});
export type AdapterInfo = z.infer<typeof AdapterInfo>;

/**
 * KV-cache policy when the adapter set changes between turns (see common/engine-protocol.ts):
 * exact re-evaluation, one cached sequence per adapter set, or activated-LoRA style.
 */
export const KvPolicySetting = z.enum(["reevaluate", "sequence-per-set", "activated"]);
export type KvPolicySetting = z.infer<typeof KvPolicySetting>;

export const AppSettings = z.object({
  kvPolicy: KvPolicySetting,
  /** Use and propose long-term memories. Off: nothing is retrieved or proposed. */
  memoryEnabled: z.boolean().default(true),
  /** What happens when a conversation outgrows the context window. */
  contextStrategy: z.enum(["sliding-window", "summary"]).default("sliding-window"),
  /** The window's colours: follow the system (live), or always light or dark. */
  theme: z.enum(["system", "light", "dark"]).default("system"),
});
export type AppSettings = z.infer<typeof AppSettings>;

/** A fact the assistant keeps about the user across chats. Proposed ones wait for the user. */
export const Memory = z.object({
  id: Id,
  text: z.string(),
  source: z.enum(["user", "model"]),
  status: z.enum(["active", "proposed"]),
  /** Where it came from (null when typed into the panel). */
  conversationId: Id.nullable(),
  messageId: Id.nullable(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});
export type Memory = z.infer<typeof Memory>;

/** A search match; the snippet is split into plain and matching parts (no markup to render). */
export const SearchHit = z.object({
  conversationId: Id,
  conversationTitle: z.string(),
  messageId: Id.nullable(),
  role: MessageRole.nullable(),
  snippet: z.array(z.object({ text: z.string(), match: z.boolean() })),
  createdAt: z.number().int(),
});
export type SearchHit = z.infer<typeof SearchHit>;

/**
 * The database as core found it at start-up. When it is not "ok" every other call fails with
 * "database_unavailable" and the UI shows a screen offering to restore a backup or start fresh
 * (the bad file is always kept, never deleted).
 */
export const DatabaseStatus = z.object({
  state: z.enum(["ok", "corrupt", "from_future"]),
  message: z.string().nullable(),
  path: z.string(),
  backups: z.array(z.object({ id: z.string(), createdAt: z.number().int(), sizeBytes: z.number().int() })),
});
export type DatabaseStatus = z.infer<typeof DatabaseStatus>;

/** What may leave the machine: nothing (default), ratings and signals only, or text too (redacted). */
export const SharingLevel = z.enum(["off", "ratings", "ratings_and_text"]);
export type SharingLevel = z.infer<typeof SharingLevel>;

export const SyncStatus = z.object({
  state: z.enum(["idle", "syncing", "backoff", "offline", "disabled"]),
  lastSyncAt: z.number().nullable(),
  queued: z.number().int().nonnegative(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.number().nullable(),
  /** Items the server refused for good, with its reason (kept visible, never retried). */
  rejected: z.array(
    z.object({ key: z.string(), kind: z.string(), reason: z.string(), rejectedAt: z.number() }),
  ),
});
export type SyncStatus = z.infer<typeof SyncStatus>;

export const PrivacyState = z.object({
  sharing: SharingLevel,
  /** Random id of this install at the feedback service; identifies no person. */
  installId: z.string(),
  consentedAt: z.number().nullable(),
  /** The feedback service this app uploads to. */
  endpoint: z.string(),
  sync: SyncStatus,
});
export type PrivacyState = z.infer<typeof PrivacyState>;

/** Where the desktop app's local API server listens: loopback only, a port of the user's choice. */
export const LOCAL_SERVER_HOST = "127.0.0.1";
export const LocalServerPort = z.number().int().min(1024).max(65535);

/** The allow-list's rules (common/cors-origins.ts), for the renderer's field and core. */
export { MAX_CORS_ORIGINS, parseAllowedOrigin };

/**
 * An origin whose web pages may call the local API server with the key (CORS): exactly one
 * `scheme://host[:port]`, never `*` (common/cors-origins.ts). Arrives as the user typed it;
 * becomes the origin as browsers send it (`http://LOCALHOST:5173/` → `http://localhost:5173`).
 */
export const CorsOrigin = z
  .string()
  .max(MAX_CORS_ORIGIN_LENGTH)
  .transform((text, ctx) => {
    try {
      return parseAllowedOrigin(text);
    } catch (err) {
      ctx.addIssue({
        code: "custom",
        message: err instanceof Error ? err.message : String(err),
        input: text,
      });
      return z.NEVER;
    }
  });
/** The local API server's allow-list; empty (the default) answers no cross-origin request. */
export const CorsOrigins = z.array(CorsOrigin).max(MAX_CORS_ORIGINS);

/**
 * The local API server (Settings → "Local API server"): the /v1 model API of headless mode,
 * served on a port while the app runs, with its own key.
 */
export const LocalServerStatus = z.object({
  /** The user's switch (off until turned on). */
  enabled: z.boolean(),
  /** Listening now; false when off or when starting failed (see `error`). */
  running: z.boolean(),
  host: z.literal(LOCAL_SERVER_HOST),
  port: LocalServerPort,
  /** The base URL clients take (`http://127.0.0.1:PORT/v1`) while running, else null. */
  url: z.string().nullable(),
  /** What clients send as `Authorization: Bearer` or `x-api-key`. */
  apiKey: z.string(),
  /** Why it is not running although enabled (e.g. the port is in use), else null. */
  error: z.string().nullable(),
  /** Origins whose web pages may call it with the key (CORS); empty: none, the default. */
  corsOrigins: z.array(z.string()),
});
export type LocalServerStatus = z.infer<typeof LocalServerStatus>;
