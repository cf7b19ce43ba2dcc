/**
 * The subset of Anthropic's Messages API request that a local model can honour. Unlike OpenAI's
 * chat schema, unknown fields are refused: Anthropic's own API refuses them, and a client that
 * sends `top_p`-like options it believes work must not be answered as if they did.
 */
import { z } from "zod";
import { MAX_TOOLS, TOOL_NAME } from "../openai/tool-calls";

/** Anthropic's prompt-caching marker: accepted and ignored (the engine reuses its KV cache anyway). */
const CacheControl = z
  .strictObject({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() })
  .nullish();

export const TextBlock = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: CacheControl,
  // Sent back by clients that replay an answer; a local answer never cites.
  citations: z.array(z.unknown()).max(0, "citations are not supported").nullish(),
});

const ToolUseBlock = z.strictObject({
  type: z.literal("tool_use"),
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  input: z.record(z.string(), z.unknown()),
  cache_control: CacheControl,
});

const ToolResultBlock = z.strictObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1).max(256),
  content: z.union([z.string(), z.array(TextBlock)]).optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl,
});

/**
 * Block types of Anthropic's API the local model cannot take (no vision, no documents, no
 * server-side tools, no extended thinking): named in the 400 instead of "invalid discriminator".
 */
const UNSUPPORTED_BLOCKS = [
  "image",
  "document",
  "search_result",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
  "container_upload",
] as const;

const unsupportedBlocks = UNSUPPORTED_BLOCKS.map((type) =>
  z.looseObject({ type: z.literal(type) }).refine(() => false, {
    message: `'${type}' content blocks are not supported by the local model (text, tool_use and tool_result only)`,
  }),
);

export const ContentBlock = z.discriminatedUnion("type", [
  TextBlock,
  ToolUseBlock,
  ToolResultBlock,
  ...unsupportedBlocks,
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

const Message = z.strictObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(ContentBlock).max(10_000)]),
});
export type AnthropicMessage = z.infer<typeof Message>;

/** A client-side tool (Anthropic's `type` absent or "custom"); server tools are Anthropic's own. */
const Tool = z.strictObject({
  // First, so a server tool's 400 says what it is before its unknown fields are listed.
  type: z
    .literal("custom", {
      error: "only custom tools (name, description, input_schema) are supported; server tools are not",
    })
    .nullish(),
  name: z.string().regex(TOOL_NAME, "must be 1 to 64 letters, digits, underscores or dashes"),
  description: z.string().max(100_000).optional(),
  // Checked by schemaProblem (ajv) after parsing, for a message naming the JSON Schema fault.
  input_schema: z.looseObject({ type: z.literal("object") }),
  cache_control: CacheControl,
  // Generation is always grammar-constrained: `strict` changes nothing, and is accepted.
  strict: z.boolean().optional(),
  // How finely Anthropic streams a call's input (the Vercel AI SDK sets it on every streamed
  // tool): a local call's input is streamed whole once it parses, either way.
  eager_input_streaming: z.boolean().nullish(),
});

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
export const ToolChoice = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("auto"), ...parallel }),
  z.strictObject({ type: z.literal("any"), ...parallel }),
  z.strictObject({ type: z.literal("tool"), name: z.string().min(1), ...parallel }),
  z.strictObject({ type: z.literal("none") }),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

/**
 * Fields real clients send that change nothing on a local model: accepted and ignored (as
 * IgnoredFields on the OpenAI side). Any other unknown field is a 400 naming it.
 * - `service_tier`, `speed`, `inference_geo`: which of Anthropic's capacity serves the request.
 * - `cache_control` (top level): prompt caching; the engine reuses its KV cache anyway.
 * - `context_management`: rules for Anthropic to clear old tool results or thinking when the
 *   context fills; the local engine never edits the conversation, and refuses a prompt that
 *   does not fit (context_length_exceeded) instead.
 * - `metadata.user_id`: abuse tracking.
 * On tools: `cache_control`, `strict` (calls are always grammar-constrained) and
 * `eager_input_streaming` (a call's input is streamed whole once it parses).
 */
export const AnthropicIgnoredFields = {
  service_tier: z.string().max(64).nullish(),
  speed: z.string().max(64).nullish(),
  inference_geo: z.string().max(64).nullish(),
  cache_control: CacheControl,
  context_management: z.looseObject({}).nullish(),
  // Accepted for compatibility; nothing is tracked per user.
  metadata: z.strictObject({ user_id: z.string().max(256).nullish() }).optional(),
};

export const MessagesRequest = z.strictObject({
  model: z.string().min(1).max(256),
  max_tokens: z.number().int().min(1).max(1_000_000),
  messages: z.array(Message).min(1).max(10_000),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  stop_sequences: z.array(z.string().min(1)).max(16).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(1).optional(),
  stream: z.boolean().optional(),
  tools: z.array(Tool).max(MAX_TOOLS).optional(),
  tool_choice: ToolChoice.optional(),
  ...AnthropicIgnoredFields,
  // Extended thinking needs a model trained for it; `disabled` is what clients send to turn it off.
  thinking: z
    .looseObject({
      type: z.literal("disabled", { error: "extended thinking is not supported by the local model" }),
    })
    .optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

/** POST /v1/messages/count_tokens: a message request without the answer's settings. */
export const CountTokensRequest = MessagesRequest.omit({
  max_tokens: true,
  stream: true,
  stop_sequences: true,
  temperature: true,
  top_p: true,
  top_k: true,
  metadata: true,
  service_tier: true,
  speed: true,
  inference_geo: true,
});

/** Anthropic's form of a field's path, as its own errors write it: `messages.0.content.1.type`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

type Issue = z.core.$ZodIssue;

/**
 * The issue to report for a union (`content`: a string or blocks): the branch the value got
 * furthest into (a block's own field), else one message listing what each branch expected.
 */
function innermost(issue: Issue): { issue: Issue; path: PropertyKey[] } {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return { issue, path: [...issue.path] };
  const deeper = issue.errors.map((branch) => branch[0]).find((first) => first && first.path.length > 0);
  if (deeper) {
    const inner = innermost(deeper);
    return { issue: inner.issue, path: [...issue.path, ...inner.path] };
  }
  const expected = issue.errors.flatMap((branch) =>
    branch[0]?.code === "invalid_type" ? [branch[0].expected] : [],
  );
  const message =
    expected.length === issue.errors.length
      ? `Invalid input: expected ${expected.join(" or ")}`
      : issue.message;
  return { issue: { ...issue, message }, path: [...issue.path] };
}

/** A discriminator's valid values, leaving out the block types that exist only to be refused. */
function discriminatorMessage(issue: Issue): string {
  const options = (issue as { options?: unknown[] }).options;
  if (!Array.isArray(options)) return issue.message;
  const unsupported: readonly unknown[] = UNSUPPORTED_BLOCKS;
  const valid = options.filter((o) => !unsupported.includes(o)).map((o) => `'${String(o)}'`);
  return `Invalid type: expected ${valid.join(", ")}`;
}

/** The first problem as one message naming the field (an unknown field by its own path). */
export function describeIssue(error: z.ZodError): string {
  const first = error.issues[0];
  if (!first) return "Invalid request body.";
  const { issue, path } = innermost(first);
  if (issue.code === "unrecognized_keys") {
    const fields = issue.keys.map((key) => `'${fieldPath([...path, key])}'`).join(", ");
    return `Unknown field ${fields}: extra inputs are not permitted.`;
  }
  const message =
    issue.code === "invalid_union" && (issue as { note?: string }).note === "No matching discriminator"
      ? discriminatorMessage(issue)
      : issue.message;
  return path.length > 0 ? `${fieldPath(path)}: ${message}` : message;
}
