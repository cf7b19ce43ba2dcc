/**
 * The OpenAPI 3.1 description of the app API and of the OpenAI- and Anthropic-compatible API
 * under /v1, generated from the method map and the request schemas so it cannot drift.
 */
import { z } from "zod";
import { ApiErrorShape, methodNames, methods } from "../api";
import { CountTokensRequest, MessagesRequest } from "./anthropic/schemas";
import { ResponsesRequest } from "./openai/responses-schemas";
import { ChatCompletionRequest, CompletionRequest, EmbeddingRequest } from "./openai/schemas";

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  // OpenAPI 3.1 uses JSON Schema 2020-12, zod's default target; the per-schema $schema is noise there.
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

const errorEnvelope = {
  type: "object",
  properties: { ok: { const: false }, error: jsonSchema(ApiErrorShape, "output") },
  required: ["ok", "error"],
} satisfies JsonSchema;

function errorResponse(description: string) {
  return {
    description,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
  };
}

const openAiError = {
  type: "object",
  description: "OpenAI's error shape; `param` names the offending request field.",
  properties: {
    error: {
      type: "object",
      properties: {
        message: { type: "string" },
        type: {
          enum: [
            "invalid_request_error",
            "authentication_error",
            "permission_error",
            "rate_limit_error",
            "server_error",
          ],
        },
        param: { type: ["string", "null"] },
        code: { type: ["string", "null"] },
      },
      required: ["message", "type", "param", "code"],
    },
  },
  required: ["error"],
} satisfies JsonSchema;

const anthropicError = {
  type: "object",
  description: "Anthropic's error shape.",
  properties: {
    type: { const: "error" },
    error: {
      type: "object",
      properties: { type: { type: "string" }, message: { type: "string" } },
      required: ["type", "message"],
    },
  },
  required: ["type", "error"],
} satisfies JsonSchema;

const usage = {
  type: "object",
  properties: {
    prompt_tokens: { type: "integer" },
    completion_tokens: { type: "integer" },
    total_tokens: { type: "integer" },
  },
  required: ["prompt_tokens", "total_tokens"],
} satisfies JsonSchema;

/** The answers' main fields (clients ignore the rest; the streamed events are described in words). */
const v1Answers = {
  models: {
    type: "object",
    properties: {
      object: { const: "list" },
      data: {
        type: "array",
        items: {
          type: "object",
          properties: {
            id: { type: "string" },
            object: { const: "model" },
            created: { type: "integer" },
            owned_by: { type: "string" },
          },
          required: ["id", "object", "created", "owned_by"],
        },
      },
    },
    required: ["object", "data"],
  },
  chat: {
    type: "object",
    properties: {
      id: { type: "string" },
      object: { const: "chat.completion" },
      created: { type: "integer" },
      model: { type: "string" },
      choices: {
        type: "array",
        items: {
          type: "object",
          properties: {
            index: { type: "integer" },
            message: {
              type: "object",
              properties: {
                role: { const: "assistant" },
                content: { type: ["string", "null"] },
                tool_calls: { type: "array" },
              },
            },
            logprobs: {
              type: ["object", "null"],
              description: "`{content: [{token, logprob, bytes, top_logprobs}]}`",
            },
            finish_reason: { enum: ["stop", "length", "tool_calls"] },
          },
        },
      },
      usage,
    },
    required: ["id", "object", "created", "model", "choices", "usage"],
  },
  completion: {
    type: "object",
    properties: {
      id: { type: "string" },
      object: { const: "text_completion" },
      created: { type: "integer" },
      model: { type: "string" },
      choices: {
        type: "array",
        items: {
          type: "object",
          properties: {
            index: { type: "integer" },
            text: { type: "string" },
            logprobs: {
              type: ["object", "null"],
              description: "`{tokens, token_logprobs, top_logprobs, text_offset}`",
            },
            finish_reason: { enum: ["stop", "length"] },
          },
        },
      },
      usage,
    },
    required: ["id", "object", "created", "model", "choices", "usage"],
  },
  embeddings: {
    type: "object",
    properties: {
      object: { const: "list" },
      data: {
        type: "array",
        items: {
          type: "object",
          properties: {
            object: { const: "embedding" },
            index: { type: "integer" },
            embedding: {
              oneOf: [
                { type: "array", items: { type: "number" } },
                { type: "string", description: "base64: little-endian float32" },
              ],
            },
          },
          required: ["object", "index", "embedding"],
        },
      },
      model: { type: "string" },
      usage,
    },
    required: ["object", "data", "model", "usage"],
  },
} satisfies Record<string, JsonSchema>;

type V1ErrorShape = "OpenAiError" | "AnthropicError";

function v1Errors(shape: V1ErrorShape): Record<string, unknown> {
  const error = (description: string) => ({
    description,
    content: { "application/json": { schema: { $ref: `#/components/schemas/${shape}` } } },
  });
  return {
    "400": error(
      "A bad value or an unknown field (`Unrecognized request argument supplied: <field>`), " +
        "a setting the local model cannot honour, or context_length_exceeded; the field is named.",
    ),
    "401": error("Missing or wrong key (Bearer or x-api-key)."),
    "404": error("model_not_found: see GET /v1/models."),
    "429": error("Too many requests wait for the model; retry later."),
    "500": error(
      "The generation failed; the message carries an error id that the server log has with the details.",
    ),
    "501": error("The engine cannot serve this endpoint."),
    "503": error("No model is loaded, or the engine is restarting."),
  };
}

/** A /v1 operation: request body from its zod schema, a JSON answer or (with `stream: true`) SSE. */
function v1Operation(options: {
  operationId: string;
  summary: string;
  request?: z.ZodType;
  answer: string;
  /** The JSON answer's schema, where it is OpenAI's well-known shape. */
  answerSchema?: JsonSchema;
  streams?: boolean;
  errors?: V1ErrorShape;
}): Record<string, unknown> {
  const content: Record<string, unknown> = {
    "application/json": { schema: options.answerSchema ?? { type: "object", description: options.answer } },
  };
  if (options.streams)
    content["text/event-stream"] = {
      schema: { type: "string", description: "With `stream: true`: server-sent events." },
    };
  return {
    operationId: options.operationId,
    tags: ["v1"],
    summary: options.summary,
    ...(options.request
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(options.request, "input") } },
          },
        }
      : {}),
    responses: {
      "200": { description: options.answer, content },
      ...v1Errors(options.errors ?? "OpenAiError"),
    },
  };
}

/** The compatible API under /v1: every route routes.ts registers (a test keeps them in step). */
function v1Paths(): Record<string, unknown> {
  return {
    "/v1/models": {
      get: v1Operation({
        operationId: "v1.models",
        summary: "The loaded base model (by file name), every enabled adapter that fits it, and `auto`.",
        answer: '`{object: "list", data: [{id, object: "model", created, owned_by}]}`',
        answerSchema: v1Answers.models,
      }),
    },
    "/v1/models/{id}": {
      get: v1Operation({
        operationId: "v1.model",
        summary:
          "One model of GET /v1/models (OpenAI's and Anthropic's `models.retrieve`; a request with " +
          "`anthropic-version` gets Anthropic's shape, as GET /v1/models does).",
        answer:
          '`{id, object: "model", created, owned_by}` (Anthropic: `{type: "model", id, display_name, created_at}`)',
      }),
    },
    "/v1/chat/completions": {
      post: v1Operation({
        operationId: "v1.chatCompletions",
        summary:
          "OpenAI chat completions: samplers, response_format (json_object, json_schema), logprobs, tools, " +
          "one choice. `adapters` (non-standard) blends installed adapters.",
        request: ChatCompletionRequest,
        answer: "A `chat.completion` (or `chat.completion.chunk` events, then `[DONE]`).",
        answerSchema: v1Answers.chat,
        streams: true,
      }),
    },
    "/v1/completions": {
      post: v1Operation({
        operationId: "v1.completions",
        summary: "OpenAI legacy completions: one raw prompt continued without the chat template.",
        request: CompletionRequest,
        answer: "A `text_completion` (or `text_completion` events, then `[DONE]`).",
        answerSchema: v1Answers.completion,
        streams: true,
      }),
    },
    "/v1/embeddings": {
      post: v1Operation({
        operationId: "v1.embeddings",
        summary:
          "Embeddings from the loaded base model (whatever adapter `model` names); float or base64 " +
          "(little-endian float32).",
        request: EmbeddingRequest,
        answer: '`{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`',
        answerSchema: v1Answers.embeddings,
      }),
    },
    "/v1/responses": {
      post: v1Operation({
        operationId: "v1.responses",
        summary: "OpenAI Responses API, the stateless subset coding agents use.",
        request: ResponsesRequest,
        answer: "A `response` object (or `response.*` events).",
        streams: true,
      }),
    },
    "/v1/messages": {
      post: v1Operation({
        operationId: "v1.messages",
        summary: "Anthropic Messages API (Claude Code–style clients); errors in Anthropic's shape.",
        request: MessagesRequest,
        answer: "A `message` (or Anthropic's stream events).",
        streams: true,
        errors: "AnthropicError",
      }),
    },
    "/v1/messages/count_tokens": {
      post: v1Operation({
        operationId: "v1.messagesCountTokens",
        summary:
          "Anthropic's token count: the exact prompt length as the engine lays it out (it runs the " +
          "request with a one-token answer, which also leaves the prompt in the KV cache).",
        request: CountTokensRequest,
        answer: "`{input_tokens}`",
        errors: "AnthropicError",
      }),
    },
  };
}

/**
 * zod puts what a recursive schema refers to in that schema's own `$defs`, referenced as
 * `#/$defs/…`: from the document's root, where nothing is. Each such `$defs` moves to
 * components.schemas (named after the operation: `chat.send.__schema0`), its references with it.
 */
function hoistDefs(document: JsonSchema, schemas: Record<string, JsonSchema>): JsonSchema {
  const walk = (value: unknown, operation: string): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, operation));
    if (value === null || typeof value !== "object") return value;
    const object = value as JsonSchema;
    const here = typeof object.operationId === "string" ? object.operationId : operation;
    const { $defs, ...rest } = object as JsonSchema & { $defs?: Record<string, JsonSchema> };
    if (!$defs) return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, walk(v, here)]));
    const names = new Map<string, string>();
    for (const def of Object.keys($defs)) {
      let name = `${here}.${def}`;
      for (let n = 2; name in schemas || [...names.values()].includes(name); n++)
        name = `${here}.${def}.${n}`;
      names.set(def, name);
    }
    const rewrite = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(rewrite);
      if (v === null || typeof v !== "object") return v;
      return Object.fromEntries(
        Object.entries(v).map(([k, inner]) => {
          const def =
            k === "$ref" && typeof inner === "string" ? /^#\/\$defs\/(.+)$/.exec(inner)?.[1] : undefined;
          return [
            k,
            def !== undefined && names.has(def) ? `#/components/schemas/${names.get(def)}` : rewrite(inner),
          ];
        }),
      );
    };
    for (const [def, schema] of Object.entries($defs))
      schemas[names.get(def)!] = rewrite(schema) as JsonSchema;
    return walk(rewrite(rest), here);
  };
  return walk(document, "") as JsonSchema;
}

/** Builds the document served at /api/openapi.json. */
export function buildOpenApiDocument(version: string): JsonSchema {
  const paths: Record<string, unknown> = {};
  for (const name of methodNames) {
    const method = methods[name];
    paths[`/api/call/${name}`] = {
      post: {
        operationId: name,
        tags: [name.split(".")[0]],
        requestBody: {
          required: true,
          content: { "application/json": { schema: jsonSchema(method.input, "input") } },
        },
        responses: {
          "200": {
            description: "The method ran.",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { ok: { const: true }, value: jsonSchema(method.output, "output") },
                  required: ["ok", "value"],
                },
              },
            },
          },
          "400": errorResponse("invalid_input or unknown_method"),
          "401": errorResponse("unauthorized: missing or wrong key"),
          "403": errorResponse("forbidden: cross-origin request with the session cookie"),
          "404": errorResponse("not_found"),
          "409": errorResponse("busy"),
          "422": errorResponse("no_model, model_invalid or model_load_failed"),
          "500": errorResponse("internal"),
          "503": errorResponse("engine_crashed"),
          "507": errorResponse("disk_full: free disk space, then try again"),
        },
      },
    };
  }
  const schemas: Record<string, JsonSchema> = {
    ErrorEnvelope: errorEnvelope,
    OpenAiError: openAiError,
    AnthropicError: anthropicError,
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "Macaron Desktop app API",
      version,
      description:
        "Every method is `POST /api/call/{method}` with a JSON body. Events stream over the WebSocket " +
        "`GET /api/events` as text frames `{event, payload}`. An OpenAI-compatible API (and " +
        "Anthropic's `/v1/messages`) lives under /v1.",
    },
    paths: hoistDefs({ ...paths, ...v1Paths() }, schemas),
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        apiKeyHeader: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "The same key, as Anthropic clients send it.",
        },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "macaron_session_<instance>",
          description:
            "Set by opening the printed sign-in URL (`/?code=…`, single use); its name is per instance.",
        },
      },
    },
    security: [{ bearer: [] }, { session: [] }, { apiKeyHeader: [] }],
  };
}
