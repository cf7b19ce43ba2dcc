/**
 * The requests of Ollama's API that this server answers (/api/chat, /api/generate, /api/embed,
 * /api/embeddings, /api/show), as the official `ollama` client sends them. Unknown fields are
 * refused by name, as on /v1; `options` are checked in options.ts.
 */
import { z } from "zod";
import { FunctionTool, MAX_TOOLS } from "../openai/tool-calls";
import { MAX_EMBEDDING_INPUTS } from "../openai/schemas";

const ModelName = z.string().min(1).max(256);

/** `keep_alive` ("5m", 300, -1, 0): how long Ollama keeps a model loaded; here the app decides. */
const KeepAlive = z.union([z.string().max(64), z.number()]).nullish();

/** `format`: "json" (any JSON), a JSON Schema object, or "" (plain text, as some clients send). */
export const Format = z
  .union([z.literal("json"), z.literal(""), z.record(z.string(), z.unknown())])
  .nullish();
export type Format = z.infer<typeof Format>;

/** Raw options; options.ts names the unknown and unsupported ones in Ollama's error shape. */
const Options = z.record(z.string(), z.unknown()).nullish();

/** `think`: reasoning models only; false (or absent) is what a plain model can honour. */
const Think = z.union([z.boolean(), z.enum(["low", "medium", "high"])]).nullish();

const ToolCall = z.object({
  function: z.object({
    name: z.string().min(1).max(256),
    arguments: z.record(z.string(), z.unknown()).nullish(),
    index: z.number().int().nullish(),
  }),
  id: z.string().max(256).nullish(),
  type: z.literal("function").nullish(),
});

export const OllamaMessage = z.strictObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string().nullish(),
  /** A replayed answer's reasoning: not shown to the model again (Ollama drops it too). */
  thinking: z.string().nullish(),
  images: z.array(z.string()).nullish(),
  tool_calls: z.array(ToolCall).max(MAX_TOOLS).nullish(),
  /** Which tool a `tool` message answers (Ollama's messages carry no call ids). */
  tool_name: z.string().max(256).nullish(),
  tool_call_id: z.string().max(256).nullish(),
});
export type OllamaMessage = z.infer<typeof OllamaMessage>;

/** Token log-probabilities: in the schema to be refused by name when asked for (/v1 reports them). */
const Logprobs = {
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).nullish(),
};

export const ChatRequest = z.strictObject({
  model: ModelName,
  messages: z.array(OllamaMessage).max(10_000).nullish(),
  stream: z.boolean().nullish(),
  format: Format,
  options: Options,
  tools: z.array(FunctionTool).max(MAX_TOOLS).nullish(),
  keep_alive: KeepAlive,
  think: Think,
  truncate: z.boolean().nullish(),
  shift: z.boolean().nullish(),
  ...Logprobs,
});
export type ChatRequest = z.infer<typeof ChatRequest>;

export const GenerateRequest = z.strictObject({
  model: ModelName,
  prompt: z.string().nullish(),
  /** Fill-in-the-middle: in the schema to be refused by name. */
  suffix: z.string().nullish(),
  system: z.string().nullish(),
  /** A prompt template of Go's text/template: in the schema to be refused by name. */
  template: z.string().nullish(),
  /** Ollama's deprecated token context of an earlier answer: refused by name. */
  context: z.array(z.number()).nullish(),
  stream: z.boolean().nullish(),
  raw: z.boolean().nullish(),
  format: Format,
  images: z.array(z.string()).nullish(),
  /** Image generation: in the schema to be refused by name. */
  width: z.number().nullish(),
  height: z.number().nullish(),
  steps: z.number().nullish(),
  options: Options,
  keep_alive: KeepAlive,
  think: Think,
  truncate: z.boolean().nullish(),
  shift: z.boolean().nullish(),
  ...Logprobs,
});
export type GenerateRequest = z.infer<typeof GenerateRequest>;

export const EmbedRequest = z.strictObject({
  model: ModelName,
  input: z
    .union([z.string(), z.array(z.string()).min(1)])
    .refine((input) => typeof input === "string" || input.length <= MAX_EMBEDDING_INPUTS, {
      message: `At most ${MAX_EMBEDDING_INPUTS} inputs per request; split the list into several requests.`,
    }),
  /** As Ollama: a long input is cut to what the model takes unless this is false (then a 400). */
  truncate: z.boolean().nullish(),
  dimensions: z.number().int().min(1).nullish(),
  options: Options,
  keep_alive: KeepAlive,
});
export type EmbedRequest = z.infer<typeof EmbedRequest>;

/** The legacy single-text form. */
export const EmbeddingsRequest = z.strictObject({
  model: ModelName,
  prompt: z.string(),
  options: Options,
  keep_alive: KeepAlive,
});

export const ShowRequest = z.strictObject({
  model: ModelName.nullish(),
  /** The older name of `model`. */
  name: ModelName.nullish(),
  system: z.string().nullish(),
  template: z.string().nullish(),
  verbose: z.boolean().nullish(),
  options: Options,
});

/** A field's path as Ollama's clients read it: `messages.0.role`. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

/** The first problem as one sentence naming the field (an unknown field by its own path). */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "Invalid request body.";
  if (issue.code === "unrecognized_keys") {
    const fields = issue.keys.map((key) => `'${pathText([...issue.path, key])}'`).join(", ");
    return `Unknown field ${fields} (this server answers Ollama's documented request fields only).`;
  }
  return issue.path.length > 0 ? `Invalid '${pathText(issue.path)}': ${issue.message}` : issue.message;
}
