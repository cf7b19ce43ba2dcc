/** The subset of OpenAI's chat completion request that a local model can honour. Unknown fields are ignored, as OpenAI-compatible servers do. */
import { z } from "zod";
import type { ChatTurn } from "../../core/engine/types";

const TextPart = z.object({ type: z.literal("text"), text: z.string() });

const ChatMessage = z.object({
  // "developer" is what newer OpenAI clients send in place of "system".
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: z.union([z.string(), z.array(TextPart)]),
});

export const ChatCompletionRequest = z.object({
  model: z.string().min(1).max(256),
  messages: z.array(ChatMessage).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  max_tokens: z.number().int().min(1).max(1_000_000).nullish(),
  max_completion_tokens: z.number().int().min(1).max(1_000_000).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  seed: z.number().int().nullish(),
  n: z.literal(1).nullish(),
  /** Non-standard: blend these installed adapters with these scales (0..2) on the base model. */
  adapters: z.record(z.string().min(1).max(64), z.number().min(0).max(2)).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** The request's messages as engine turns: the history is the request's, nothing is kept. */
export function toChatTurns(messages: ChatCompletionRequest["messages"]): ChatTurn[] {
  return messages.map((m) => ({
    role: m.role === "developer" ? "system" : m.role,
    text: typeof m.content === "string" ? m.content : m.content.map((p) => p.text).join("\n"),
  }));
}

/** OpenAI names the offending field in `param` ("messages.0.role"). */
export function describeIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request body.", param: null };
  const param = issue.path.length > 0 ? issue.path.map(String).join(".") : null;
  return { message: param ? `Invalid '${param}': ${issue.message}` : issue.message, param };
}
