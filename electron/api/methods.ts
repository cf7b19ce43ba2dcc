/**
 * The method map: one entry per call the UI can make, with input and output schemas.
 * Transports (IPC, HTTP) and the preload are generated from this object.
 */
import { z } from "zod";
import {
  AdapterSelection,
  Conversation,
  ConversationDetail,
  EngineStatus,
  Id,
  Message,
  ModelInfo,
  SamplingSettings,
} from "./schemas";

const Empty = z.object({}).strict();

export const methods = {
  "models.status": { input: Empty, output: EngineStatus },
  /** Read a GGUF file's metadata without loading it; refuses non-models with a clear error. */
  "models.inspect": { input: z.object({ path: z.string().min(1).max(4096) }).strict(), output: ModelInfo },
  /** Load a model from a path on the machine that runs core. Resolves when loaded. */
  "models.open": { input: z.object({ path: z.string().min(1).max(4096) }).strict(), output: EngineStatus },
  /** Generate (if needed) and load the tiny built-in demo model. */
  "models.openDemo": { input: Empty, output: EngineStatus },

  "conversations.list": {
    input: z.object({ query: z.string().max(500).optional() }).strict(),
    output: z.array(Conversation),
  },
  "conversations.create": {
    input: z.object({ title: z.string().max(200).optional() }).strict(),
    output: Conversation,
  },
  "conversations.get": { input: z.object({ id: Id }).strict(), output: ConversationDetail },
  "conversations.rename": {
    input: z.object({ id: Id, title: z.string().min(1).max(200) }).strict(),
    output: Conversation,
  },
  "conversations.delete": { input: z.object({ id: Id }).strict(), output: z.object({ deleted: z.boolean() }) },

  /**
   * Commit the user message, then start generating. Returns at once with both messages;
   * tokens arrive as `chat.delta` events and the end as `chat.done`.
   */
  "chat.send": {
    input: z
      .object({
        conversationId: Id,
        text: z.string().min(1).max(100_000),
        adapters: AdapterSelection.optional(),
        sampling: SamplingSettings.optional(),
      })
      .strict(),
    output: z.object({ userMessage: Message, assistantMessage: Message }),
  },
  /** Stop the generation running in a conversation; the partial answer is kept as "stopped". */
  "chat.stop": { input: z.object({ conversationId: Id }).strict(), output: z.object({ stopped: z.boolean() }) },
} as const;

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type MethodInput<M extends MethodName> = z.input<Methods[M]["input"]>;
export type MethodOutput<M extends MethodName> = z.output<Methods[M]["output"]>;

export const methodNames = Object.keys(methods) as MethodName[];

export function isMethodName(name: unknown): name is MethodName {
  return typeof name === "string" && Object.prototype.hasOwnProperty.call(methods, name);
}
