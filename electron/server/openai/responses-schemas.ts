/**
 * The subset of OpenAI's Responses API request (POST /v1/responses) that a local, stateless
 * server can honour: what Codex-style coding agents and the `openai` SDK's
 * `client.responses.create/stream` send. Unlike chat completions, an unknown top-level field is
 * a 400 (`Unrecognized request argument supplied: X`), as OpenAI answers it: a client that sends
 * a field it expects to matter learns at once that it does not.
 *
 * Three kinds of fields:
 * - honoured: model, input, instructions, tools, tool_choice, parallel_tool_calls, temperature,
 *   top_p, max_output_tokens, stream, text.format, top_logprobs and
 *   `include: ["message.output_text.logprobs"]` (log-probabilities of the answer's tokens);
 * - accepted with no effect (RESPONSES_NO_EFFECT): they tune what OpenAI's service stores,
 *   caches, bills or reasons, none of which this server does (`store` is accepted, and nothing
 *   is ever stored);
 * - refused with a 400 naming them (unsupportedField): anything that needs a stored response,
 *   conversation or prompt (`previous_response_id`, `conversation`, `prompt`, `item_reference`
 *   items) or work the server does not do (`background`, `truncation: "auto"`).
 */
import { z } from "zod";
import { MAX_TOOLS, TOOL_NAME } from "./tool-calls";
import { TopLogprobs } from "./sampling";
import { describeIssue } from "./schemas";

/** Fields accepted and ignored, with why (the OpenAPI document and the 400s cite them). */
export const RESPONSES_NO_EFFECT = {
  store: "nothing is stored: the server is stateless",
  reasoning: "local models answer without a separate reasoning budget",
  include:
    'no reasoning, search or image outputs exist to include; only "message.output_text.logprobs" has an effect (log-probabilities)',
  metadata: "echoed in the response, never stored",
  client_metadata: "Codex's session details; nothing is logged or stored",
  user: "no per-user accounting",
  safety_identifier: "no per-user accounting",
  prompt_cache_key: "the engine's KV cache is reused whenever the prompt's start matches",
  prompt_cache_retention: "the engine's KV cache is reused whenever the prompt's start matches",
  prompt_cache_options: "the engine's KV cache is reused whenever the prompt's start matches",
  service_tier: "one local tier",
  stream_options: "events are never obfuscated",
  "text.verbosity": "a hint the local model was not trained on",
} as const;

const noEffect = (field: keyof typeof RESPONSES_NO_EFFECT) =>
  `Accepted; no effect: ${RESPONSES_NO_EFFECT[field]}.`;

/** The error for a `type` discriminator outside the listed ones, naming what is supported. */
function unsupportedType(what: string, supported: string) {
  return (issue: { input?: unknown; code?: string }) => {
    if (issue.code !== "invalid_union" && issue.code !== "invalid_value") return undefined;
    const input = issue.input;
    const type = typeof input === "object" && input !== null && "type" in input ? input.type : input;
    return `${what} of type ${JSON.stringify(type)} are not supported; supported: ${supported}.`;
  };
}

const InputText = z.object({ type: z.literal("input_text"), text: z.string() });
/** An earlier answer's text, as the SDK hands back output items (annotations and logprobs ignored). */
const OutputText = z.object({ type: z.literal("output_text"), text: z.string() });
const Refusal = z.object({ type: z.literal("refusal"), refusal: z.string() });

const ContentPart = z.discriminatedUnion("type", [InputText, OutputText, Refusal], {
  // Images, files and audio: the models this server runs read text only.
  error: unsupportedType("Content parts", "input_text, output_text, refusal (the models read text only)"),
});
export type ResponsesContentPart = z.infer<typeof ContentPart>;

const MessageItem = z.object({
  // The SDK's EasyInputMessage may leave `type` out.
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union([z.string(), z.array(ContentPart).max(10_000)]),
});

const FunctionCallItem = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  /** A JSON string, as the model produced it. */
  arguments: z.string(),
});

const FunctionCallOutputItem = z.object({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1).max(256),
  output: z.union([z.string(), z.array(ContentPart).max(10_000)]),
});

/** A reasoning item handed back by an agent (Codex keeps them in its history): ignored. */
const ReasoningItem = z.looseObject({ type: z.literal("reasoning") });

const InputItem = z.discriminatedUnion(
  "type",
  [MessageItem, FunctionCallItem, FunctionCallOutputItem, ReasoningItem],
  {
    error: unsupportedType(
      "Input items",
      "message, function_call, function_call_output, reasoning (ignored); an item_reference needs a stored response, and nothing is stored",
    ),
  },
);
export type ResponsesInputItem = z.infer<typeof InputItem>;

export const ResponsesFunctionTool = z.object({
  type: z.literal("function", {
    error: unsupportedType("Tools", "function (the client runs its tools; the server runs none)"),
  }),
  name: z.string().regex(TOOL_NAME, "must be 1 to 64 letters, digits, underscores or dashes"),
  description: z.string().max(100_000).nullish(),
  // Checked by schemaProblem (ajv) after parsing, for a message naming the JSON Schema fault.
  parameters: z.unknown().optional(),
  // Generation is always grammar-constrained: `strict` changes nothing, and is accepted.
  strict: z.boolean().nullish(),
});
export type ResponsesFunctionTool = z.infer<typeof ResponsesFunctionTool>;

export const ResponsesToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), name: z.string().min(1).max(256) }),
]);
export type ResponsesToolChoice = z.infer<typeof ResponsesToolChoice>;

const TextFormat = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({
      type: z.literal("json_schema"),
      name: z.string().regex(TOOL_NAME, "must be 1 to 64 letters, digits, underscores or dashes"),
      description: z.string().max(100_000).nullish(),
      schema: z.record(z.string(), z.unknown()),
      // The grammar always enforces the schema: `strict` changes nothing, and is accepted.
      strict: z.boolean().nullish(),
    }),
  ],
  { error: unsupportedType("Text formats", "text, json_object, json_schema") },
);
export type ResponsesTextFormat = z.infer<typeof TextFormat>;

export const ResponsesRequest = z.strictObject({
  model: z
    .string()
    .min(1)
    .max(256)
    .describe("A model id from GET /v1/models: `auto`, the base's id or an adapter's."),
  input: z
    .union([z.string(), z.array(InputItem).min(1).max(10_000)])
    .describe(
      "The whole conversation (the server stores none): a user message as a string, or items ending with a user message or function_call_output items.",
    ),
  instructions: z.string().max(1_000_000).nullish().describe("Becomes the first system message."),
  tools: z
    .array(ResponsesFunctionTool)
    .max(MAX_TOOLS)
    .nullish()
    .describe(
      "Function tools the model may call; the client runs them and sends function_call_output items.",
    ),
  tool_choice: ResponsesToolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  temperature: z
    .number()
    .min(0)
    .max(2)
    .nullish()
    .describe("0 is greedy (the same answer every time). Default 1."),
  // As on chat completions (sampling.ts): above 0, since 0 would keep no token at all.
  top_p: z.number().gt(0).max(1).nullish(),
  max_output_tokens: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .nullish()
    .describe("At most the loaded model's context; cut answers come back with status incomplete."),
  stream: z.boolean().nullish().describe("Server-sent events, as OpenAI sends them."),
  top_logprobs: TopLogprobs.describe(
    'Alternatives per token (0..20). With it above 0, or include "message.output_text.logprobs", output_text carries each token\'s log-probability.',
  ),
  text: z
    .object({
      format: TextFormat.nullish().describe(
        "json_object or json_schema constrain the answer by grammar; it is validated after generation.",
      ),
      verbosity: z.enum(["low", "medium", "high"]).nullish().describe(noEffect("text.verbosity")),
    })
    .nullish(),
  adapters: z
    .record(z.string().min(1).max(64), z.number().min(0).max(2))
    .nullish()
    .describe("Non-standard, as on chat completions: blend these installed adapters (id → scale 0..2)."),

  store: z.boolean().nullish().describe(noEffect("store")),
  reasoning: z.looseObject({}).nullish().describe(noEffect("reasoning")),
  include: z.array(z.string().max(256)).max(64).nullish().describe(noEffect("include")),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullish().describe(noEffect("metadata")),
  client_metadata: z
    .record(z.string().max(256), z.string().max(4096))
    .nullish()
    .describe(noEffect("client_metadata")),
  user: z.string().max(512).nullish().describe(noEffect("user")),
  safety_identifier: z.string().max(512).nullish().describe(noEffect("safety_identifier")),
  prompt_cache_key: z.string().max(1024).nullish().describe(noEffect("prompt_cache_key")),
  prompt_cache_retention: z.enum(["in_memory", "24h"]).nullish().describe(noEffect("prompt_cache_retention")),
  prompt_cache_options: z.looseObject({}).nullish().describe(noEffect("prompt_cache_options")),
  service_tier: z
    .enum(["auto", "default", "flex", "scale", "priority"])
    .nullish()
    .describe(noEffect("service_tier")),
  stream_options: z.looseObject({}).nullish().describe(noEffect("stream_options")),

  // Refused unless absent or off (unsupportedField): each needs state or work the server lacks.
  truncation: z
    .enum(["auto", "disabled"])
    .nullish()
    .describe('Only "disabled": input that does not fit is a 400.'),
  background: z
    .boolean()
    .nullish()
    .describe("Only false: answers are streamed or returned, never run in the background."),
  previous_response_id: z
    .string()
    .nullish()
    .describe("Refused: nothing is stored; send the whole conversation in input."),
  conversation: z
    .unknown()
    .optional()
    .describe("Refused: nothing is stored; send the whole conversation in input."),
  prompt: z
    .unknown()
    .optional()
    .describe("Refused: there are no stored prompts; send instructions and input."),
  context_management: z.unknown().optional().describe("Refused: the server does not compact conversations."),
  moderation: z.unknown().optional().describe("Refused: the server does not moderate."),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

export interface RequestProblem {
  message: string;
  param: string | null;
}

/**
 * The issue inside a union that says what is wrong: `input` is a string or a list of items, and
 * for a list the client needs to hear about `input[3].type`, not "Invalid input". The branch
 * whose issue lies deepest is the one the value was meant for.
 */
function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  let tie = false;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first) continue;
    if (!best || first.path.length > best.path.length) {
      best = first;
      tie = false;
    } else if (first.path.length === best.path.length) tie = true;
  }
  if (!best || tie || best.path.length === 0) return issue;
  return innermost({ ...best, path: [...issue.path, ...best.path] });
}

/** A failed parse in OpenAI's words: an unknown field as OpenAI names it, else describeIssue. */
export function describeResponsesIssue(error: z.ZodError): RequestProblem {
  const first = error.issues[0];
  if (first?.code === "unrecognized_keys" && first.path.length === 0) {
    const key = first.keys[0] ?? "";
    return { message: `Unrecognized request argument supplied: ${key}`, param: key };
  }
  if (!first) return describeIssue(error);
  return describeIssue(new z.ZodError([innermost(first)]));
}

const STATELESS =
  "not supported: send the whole conversation in input (this server is stateless and stores no responses)";

/** A field the schema accepts but whose value the server cannot honour, or null. */
export function unsupportedField(body: ResponsesRequest): RequestProblem | null {
  if (body.previous_response_id != null) {
    return { message: `'previous_response_id' is ${STATELESS}.`, param: "previous_response_id" };
  }
  if (body.conversation != null) return { message: `'conversation' is ${STATELESS}.`, param: "conversation" };
  if (body.prompt != null) {
    return {
      message: "'prompt' is not supported: there are no stored prompts; send instructions and input.",
      param: "prompt",
    };
  }
  if (body.background) {
    return {
      message:
        "'background' is not supported: answers are streamed or returned, never run in the background.",
      param: "background",
    };
  }
  if (body.truncation === "auto") {
    return {
      message:
        "'truncation: auto' is not supported: the server does not drop input items; send input that fits the context.",
      param: "truncation",
    };
  }
  if (body.context_management != null) {
    return {
      message: "'context_management' is not supported: the server does not compact conversations.",
      param: "context_management",
    };
  }
  if (body.moderation != null) {
    return { message: "'moderation' is not supported: the server does not moderate.", param: "moderation" };
  }
  return null;
}
