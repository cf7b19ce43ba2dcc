/**
 * Domain schemas shared by every transport. This folder imports nothing of the project:
 * the renderer, the preload, core and the headless server all build on it.
 */
import { z } from "zod";

export const Id = z.string().min(1).max(64);

/** Summary of a GGUF file as read by native/gguf, shown before and after loading. */
export const ModelInfo = z.object({
  path: z.string(),
  name: z.string(),
  architecture: z.string(),
  sizeBytes: z.number().int().nonnegative(),
  contextLength: z.number().int().nonnegative(),
  embeddingLength: z.number().int().nonnegative(),
  blockCount: z.number().int().nonnegative(),
  /** True for the generated tiny demo model: it produces nonsense text. */
  isDemo: z.boolean(),
});
export type ModelInfo = z.infer<typeof ModelInfo>;

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
});
export type EngineStatus = z.infer<typeof EngineStatus>;

export const Conversation = z.object({
  id: Id,
  title: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
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

export const Message = z.object({
  id: Id,
  conversationId: Id,
  role: MessageRole,
  content: z.string(),
  status: MessageStatus,
  error: z.string().nullable(),
  createdAt: z.number().int(),
  stats: GenerationStats.nullable(),
});
export type Message = z.infer<typeof Message>;

export const ConversationDetail = z.object({
  conversation: Conversation,
  messages: z.array(Message),
});
export type ConversationDetail = z.infer<typeof ConversationDetail>;

/** Which adapters answer a turn. Only "auto" exists until the Mixture-of-LoRA work lands. */
export const AdapterSelection = z.literal("auto");
export type AdapterSelection = z.infer<typeof AdapterSelection>;

export const SamplingSettings = z.object({
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(32768).optional(),
});
export type SamplingSettings = z.infer<typeof SamplingSettings>;
