/** The subset of OpenAI's chat completion request that a local model can honour. Unknown fields are ignored, as OpenAI-compatible servers do. */
import { z } from "zod";
import { AssistantToolCall, FunctionTool, MAX_TOOLS, ToolChoiceField } from "./tool-calls";

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const Content = z.union([z.string(), z.array(TextPart)]);

const ChatMessage = z.discriminatedUnion("role", [
  // "developer" is what newer OpenAI clients send in place of "system".
  z.object({ role: z.enum(["system", "developer", "user"]), content: Content }),
  // An assistant message that only calls tools has no content (null or absent).
  z.object({
    role: z.literal("assistant"),
    content: Content.nullish(),
    tool_calls: z.array(AssistantToolCall).max(MAX_TOOLS).nullish(),
  }),
  z.object({ role: z.literal("tool"), content: Content, tool_call_id: z.string().min(1).max(256) }),
]);

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
  tools: z.array(FunctionTool).max(MAX_TOOLS).nullish(),
  tool_choice: ToolChoiceField.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  /** Non-standard: blend these installed adapters with these scales (0..2) on the base model. */
  adapters: z.record(z.string().min(1).max(64), z.number().min(0).max(2)).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** OpenAI's form of a field's path: `messages[0].role`, `tools[1].function.name`. */
export function paramPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i > 0 ? "." : ""}${String(key)}`))
    .join("");
}

/** OpenAI names the offending field in `param` ("messages[0].role"). */
export function describeIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request body.", param: null };
  const param = issue.path.length > 0 ? paramPath(issue.path) : null;
  return { message: param ? `Invalid '${param}': ${issue.message}` : issue.message, param };
}
