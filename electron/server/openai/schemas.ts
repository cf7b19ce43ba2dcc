/**
 * The requests of OpenAI's chat completions, completions and embeddings that a local model can
 * honour. Each is strict: an unknown field gets OpenAI's own 400 ("Unrecognized request argument
 * supplied: <field>") instead of being dropped, so a client never believes a setting took
 * effect when it did not; fields that change nothing locally are listed in IgnoredFields.
 */
import { z } from "zod";
import { IgnoredFields, ResponseFormat, SamplerFields, TopLogprobs } from "./sampling";
import { AssistantToolCall, FunctionTool, MAX_TOOLS, ToolChoiceField } from "./tool-calls";

const TextPart = z.object({ type: z.literal("text"), text: z.string() });
const Content = z.union([z.string(), z.array(TextPart)]);

/**
 * Messages are not strict, unlike the request: clients add fields of their own to the history
 * (`name`, the AI SDK's `reasoning_content` after a reasoning model's answer) that change
 * nothing in the prompt, and a replayed conversation must not fail on them.
 */
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

/** `include_usage` adds the usage chunk; `include_obfuscation` pads nothing here (no side channel on loopback). */
const StreamOptions = z
  .object({ include_usage: z.boolean().nullish(), include_obfuscation: z.boolean().nullish() })
  .strict();

/** A local model answers one request at a time, so n > 1 would only multiply the wait. */
const OneChoice = z.literal(1, { error: "only 1 is supported (one choice per request)" }).nullish();

/** Non-standard: blend these installed adapters with these scales (0..2) on the base model. */
const Adapters = z.record(z.string().min(1).max(64), z.number().min(0).max(2)).nullish();

export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).max(256),
    messages: z.array(ChatMessage).min(1).max(10_000),
    stream: z.boolean().nullish(),
    stream_options: StreamOptions.nullish(),
    ...SamplerFields,
    max_completion_tokens: z.number().int().min(1).max(1_000_000).nullish(),
    n: OneChoice,
    response_format: ResponseFormat.nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: TopLogprobs,
    tools: z.array(FunctionTool).max(MAX_TOOLS).nullish(),
    tool_choice: ToolChoiceField.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    adapters: Adapters,
    ...IgnoredFields,
  })
  .strict();
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/**
 * POST /v1/completions. `prompt` is one text (an array of one is accepted, as clients wrap it);
 * `suffix`, `echo: true` and `best_of` > 1 are in the schema only to be refused by name.
 */
export const CompletionRequest = z
  .object({
    model: z.string().min(1).max(256),
    prompt: z.union([z.string(), z.array(z.string()).min(1)]),
    stream: z.boolean().nullish(),
    stream_options: StreamOptions.nullish(),
    ...SamplerFields,
    n: OneChoice,
    best_of: z.number().int().min(1).max(20).nullish(),
    echo: z.boolean().nullish(),
    suffix: z.string().nullish(),
    /** Legacy: how many alternatives per token (0 = only the chosen token's). */
    logprobs: TopLogprobs,
    adapters: Adapters,
    ...IgnoredFields,
  })
  .strict();
export type CompletionRequest = z.infer<typeof CompletionRequest>;

/** OpenAI's limit on inputs per embeddings request. */
export const MAX_EMBEDDING_INPUTS = 2048;

export const EmbeddingRequest = z
  .object({
    model: z.string().min(1).max(256),
    // The count is checked after the union, whose own error for a long array says only
    // "Invalid input".
    input: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .refine((input) => typeof input === "string" || input.length <= MAX_EMBEDDING_INPUTS, {
        message: `At most ${MAX_EMBEDDING_INPUTS} inputs per request; split the list into several requests.`,
      }),
    encoding_format: z.enum(["float", "base64"]).nullish(),
    dimensions: z.number().int().min(1).nullish(),
    user: IgnoredFields.user,
  })
  .strict();
export type EmbeddingRequest = z.infer<typeof EmbeddingRequest>;

/** OpenAI's form of a field's path: `messages[0].role`, `tools[1].function.name`. */
export function paramPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === "number" ? `[${key}]` : `${i > 0 ? "." : ""}${String(key)}`))
    .join("");
}

/**
 * OpenAI names the offending field in `param` ("messages[0].role"); an unknown field gets
 * OpenAI's own wording, which clients and their users recognise.
 */
export function describeIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request body.", param: null };
  if (issue.code === "unrecognized_keys" && issue.keys[0] !== undefined) {
    const field = paramPath([...issue.path, issue.keys[0]]);
    return { message: `Unrecognized request argument supplied: ${field}`, param: field };
  }
  const param = issue.path.length > 0 ? paramPath(issue.path) : null;
  return { message: param ? `Invalid '${param}': ${issue.message}` : issue.message, param };
}
