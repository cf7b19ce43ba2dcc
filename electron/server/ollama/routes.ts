/**
 * Ollama's API on the same server, port and key as /v1 (for tools that speak only Ollama's):
 * /api/chat, /api/generate (NDJSON streams by default, or one object with `stream: false`),
 * /api/embed and the legacy /api/embeddings, /api/tags, /api/show, /api/ps, /api/version.
 *
 * Routing: the app's own API lives under /api too, but only at /api/call/<method>,
 * /api/events, /api/openapi.json, /api/health and /api/login-code, none of which Ollama uses;
 * the paths here are Ollama's exact ones (OLLAMA_PATHS) and errors on them take Ollama's shape,
 * `{"error": "…"}`. Every call needs the key (`Authorization: Bearer`), as /v1 does.
 *
 * Requests run exactly like /v1's (turn.ts): the same model ids (`:latest` may be appended, as
 * Ollama's names carry a tag), the same queue, samplers (options.ts), tool-call checks and
 * grammar for `format`.
 */
import { grammarConflictMessage } from "../../../common/generate-rules";
import { createHash } from "node:crypto";
import type { z } from "zod";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Core, ResolvedSelection } from "../../core/core-types";
import type { GenerateOptions, GenerateResult, LoadedModel } from "../../core/engine/types";
import type { EngineStatus, ModelInfo } from "../../api";
import { OpenAiError } from "../openai/errors";
import { listModels, modelIdFromPath } from "../openai/models";
import { OPENAI_BODY_LIMIT } from "../openai/routes";
import {
  responseFormatOptions,
  sendSeed,
  structuredAnswerOk,
  type StructuredCheck,
} from "../openai/sampling";
import {
  historyTurns,
  responseToolCalls,
  toolRequest,
  type HistoryMessage,
  type ToolRequest,
} from "../openai/tool-calls";
import {
  abortOnClose,
  resolveModelId,
  resolveTurn,
  toOpenAiError,
  usageOf,
  type V1Context,
} from "../openai/turn";
import { withBatchedDeltas } from "../openai/sse";
import { ollamaSampling } from "./options";
import {
  ChatRequest,
  describeIssue,
  EmbeddingsRequest,
  EmbedRequest,
  GenerateRequest,
  ShowRequest,
  type Format,
  type OllamaMessage,
} from "./schemas";

/** The Ollama API level this server follows (what GET /api/version reports; clients compare it). */
export const OLLAMA_API_VERSION = "0.12.0";

/** Ollama's routes that are answered here. */
const SERVED = [
  "/api/chat",
  "/api/generate",
  "/api/embed",
  "/api/embeddings",
  "/api/tags",
  "/api/show",
  "/api/ps",
  "/api/version",
];
/** Ollama's model-management routes: models are managed in the app; a 501 says so. */
const NOT_SERVED = ["/api/pull", "/api/push", "/api/create", "/api/copy", "/api/delete"];

/** Every path of Ollama's API (errors there take Ollama's shape). */
export function isOllamaPath(path: string): boolean {
  return SERVED.includes(path) || NOT_SERVED.includes(path) || path.startsWith("/api/blobs/");
}

export function ollamaErrorBody(message: string): { error: string } {
  return { error: message };
}

function sendError(reply: FastifyReply, error: OpenAiError) {
  return reply.code(error.status).type("application/json").send(ollamaErrorBody(error.message));
}

function invalid(message: string): OpenAiError {
  return new OpenAiError(400, "invalid_request_error", "invalid_request", message);
}

/** `name:latest` → `name` (Ollama's names carry a tag; the ids here have none). */
export function modelName(requested: string): string {
  return requested.endsWith(":latest") ? requested.slice(0, -":latest".length) : requested;
}

/**
 * Ollama's NDJSON stream: one JSON object per line. The 200 goes out with the first line, so a
 * request that fails at once still gets a real status and `{"error"}` body; a failure after
 * that is an `{"error"}` line (the `ollama` client throws it).
 */
class NdjsonChannel {
  private opened = false;

  constructor(private readonly reply: FastifyReply) {}

  get started(): boolean {
    return this.opened;
  }

  send(data: unknown): void {
    if (!this.opened) {
      this.opened = true;
      this.reply.hijack();
      const set = Object.entries(this.reply.getHeaders()).filter(([, v]) => v !== undefined);
      this.reply.raw.writeHead(200, {
        ...(Object.fromEntries(set) as Record<string, string>),
        "content-type": "application/x-ndjson",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      });
    }
    if (!this.reply.raw.writableEnded) this.reply.raw.write(`${JSON.stringify(data)}\n`);
  }

  end(): void {
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
  }
}

/** Ollama's timings (nanoseconds) and counts from a result. */
function stats(result: GenerateResult) {
  const ns = (ms: number) => Math.max(0, Math.round(ms * 1e6));
  const firstToken = result.ttftMs ?? result.durationMs;
  const usage = usageOf(result);
  return {
    total_duration: ns(result.durationMs),
    load_duration: 0,
    prompt_eval_count: usage.prompt_tokens,
    prompt_eval_duration: ns(firstToken),
    eval_count: usage.completion_tokens,
    eval_duration: ns(result.durationMs - firstToken),
  };
}

/** "length" for an answer cut off (max tokens, or a structured answer that did not finish). */
function doneReason(result: GenerateResult, structured: StructuredCheck): "stop" | "length" {
  if (result.stopReason === "maxTokens") return "length";
  if (result.stopReason === "toolCalls" || result.stopReason === "stop") return "stop";
  return structuredAnswerOk(result.text, structured) ? "stop" : "length";
}

/** `format` as GenerateOptions: "json" any JSON, an object a JSON Schema (grammar + check). */
function formatOptions(format: Format) {
  if (format === "json") return responseFormatOptions({ type: "json_object" }, "format");
  if (!format) return responseFormatOptions(null, "format");
  return responseFormatOptions(
    { type: "json_schema", json_schema: { name: "format", schema: format } },
    "format",
  );
}

/**
 * Ollama's messages as /v1's. Ollama's calls carry no ids: each call gets one, and a `tool`
 * message answers the open call its `tool_name` names, else the first open one.
 */
export function historyMessages(messages: readonly OllamaMessage[]): HistoryMessage[] {
  const out: HistoryMessage[] = [];
  let open: { id: string; name: string }[] = [];
  messages.forEach((m, i) => {
    if (m.images?.length) throw invalid(`messages.${i}.images: the local model does not take images.`);
    const content = m.content ?? "";
    if (m.role === "system" || m.role === "user") {
      out.push({ role: m.role, content });
    } else if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map((call, j) => ({
        id: call.id ?? `call_${i}_${j}`,
        type: "function" as const,
        function: { name: call.function.name, arguments: JSON.stringify(call.function.arguments ?? {}) },
      }));
      open = calls.map((c) => ({ id: c.id, name: c.function.name }));
      out.push({ role: "assistant", content, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    } else {
      const at = m.tool_call_id
        ? open.findIndex((c) => c.id === m.tool_call_id)
        : m.tool_name
          ? open.findIndex((c) => c.name === m.tool_name)
          : 0;
      const call = at >= 0 ? open[at] : undefined;
      if (!call)
        throw invalid(
          `messages.${i}: a tool result must answer a call in the assistant message before it ` +
            `(its tool_calls, matched by tool_name)${m.tool_name ? `; no open call of '${m.tool_name}'` : ""}.`,
        );
      open.splice(at, 1);
      out.push({ role: "tool", content, tool_call_id: call.id });
    }
  });
  return out;
}

/** Refuses `think` other than off: the local models are not reasoning models. */
function checkThink(think: boolean | string | null | undefined): void {
  if (think !== undefined && think !== null && think !== false)
    throw invalid(
      "'think' is not supported: the local model does not reason separately. Leave it out or send false.",
    );
}

/** Log-probabilities are reported on /v1 (chat and text completions), not on Ollama's routes. */
function checkLogprobs(logprobs: boolean | null | undefined): void {
  if (logprobs)
    throw invalid("'logprobs' is not supported on Ollama's routes: /v1/chat/completions reports them.");
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw invalid(describeIssue(parsed.error));
  return parsed.data;
}

/** What the `done` object says for a request that only loads the model (no messages, no prompt). */
function loadAnswer(model: string) {
  return { model, created_at: new Date().toISOString(), done: true, done_reason: "load" };
}

async function loadedStatus(core: Core): Promise<ModelInfo | null> {
  const status = await core.dispatch("models.status", {}, { transport: "http" });
  return status.ok ? (status.value as EngineStatus).model : null;
}

/** A stable digest for a model id (Ollama's is its manifest's; here it names the id). */
function digestOf(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}

function details(info: ModelInfo | null, parent: string) {
  const family = info?.architecture ?? "";
  return {
    parent_model: parent,
    format: "gguf",
    family,
    families: family ? [family] : [],
    parameter_size: "",
    quantization_level: "",
  };
}

export function registerOllamaRoutes(app: FastifyInstance, { core }: V1Context, appVersion: string): void {
  const run =
    (handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        return await handler(request, reply);
      } catch (error) {
        return sendError(reply, toOpenAiError(error));
      }
    };

  app.get("/api/version", (_request, reply) =>
    reply.send({ version: OLLAMA_API_VERSION, macaron: appVersion }),
  );

  app.get(
    "/api/tags",
    run(async (_request, reply) => {
      const info = await loadedStatus(core);
      const loaded = core.generation.loaded;
      const base = loaded ? modelIdFromPath(loaded.path) : "";
      const models = (await listModels(core)).map((m) => ({
        name: m.id,
        model: m.id,
        modified_at: new Date(m.created * 1000).toISOString(),
        size: m.id === base ? (info?.sizeBytes ?? 0) : 0,
        digest: digestOf(m.id),
        details: details(info, m.id === base ? "" : base),
      }));
      return reply.send({ models });
    }),
  );

  app.get(
    "/api/ps",
    run(async (_request, reply) => {
      const loaded = core.generation.loaded;
      if (!loaded) return reply.send({ models: [] });
      const info = await loadedStatus(core);
      const id = modelIdFromPath(loaded.path);
      const size = info?.sizeBytes ?? 0;
      return reply.send({
        models: [
          {
            name: id,
            model: id,
            size,
            digest: digestOf(id),
            details: details(info, ""),
            // The app keeps its model loaded until the user picks another.
            expires_at: "9999-12-31T23:59:59Z",
            size_vram: loaded.gpu ? size : 0,
            context_length: loaded.contextSize,
          },
        ],
      });
    }),
  );

  app.post(
    "/api/show",
    run(async (request, reply) => {
      const body = parseBody(ShowRequest, request.body);
      const requested = body.model ?? body.name;
      if (!requested) throw invalid("'model' is required.");
      const { loaded, selection } = await resolveModelId(core, modelName(requested));
      const info = await loadedStatus(core);
      const arch = info?.architecture ?? "llama";
      return reply.send({
        modelfile: "",
        parameters: "",
        template: "",
        details: details(info, selection === "base" ? "" : modelIdFromPath(loaded.path)),
        model_info: {
          "general.architecture": arch,
          [`${arch}.context_length`]: info?.contextLength ?? loaded.trainContextSize,
          [`${arch}.embedding_length`]: info?.embeddingLength ?? 0,
          [`${arch}.block_count`]: info?.blockCount ?? 0,
        },
        capabilities: ["completion", "tools", ...(core.generation.canEmbed ? ["embedding"] : [])],
        modified_at: new Date().toISOString(),
      });
    }),
  );

  app.post(
    "/api/chat",
    { bodyLimit: OPENAI_BODY_LIMIT },
    run(async (request, reply) => {
      const body = parseBody(ChatRequest, request.body);
      checkThink(body.think);
      const messages = body.messages ?? [];
      const model = modelName(body.model);
      if (messages.length === 0) {
        await resolveModelId(core, model);
        return reply.send({ ...loadAnswer(body.model), message: { role: "assistant", content: "" } });
      }
      const history = historyTurns(historyMessages(messages));
      const last = messages[messages.length - 1]!;
      if (last.role !== "user" && last.role !== "tool")
        throw invalid("The last message must come from the user, or be a tool result to answer.");
      const tools = toolRequest({ tools: body.tools });
      const format = formatOptions(body.format);
      const conflict = grammarConflictMessage(
        { ...format.options, tools: tools.tools },
        { tools: "tools", json: "format", jsonSchema: "format" },
      );
      if (conflict) throw invalid(conflict.message);
      const routeText = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
      const turn = await resolveTurn(core, { model, routeText });
      const options = generateOptions(turn.loaded, turn.resolved, body.options, format.options, tools);
      sendSeed(reply, options);
      const signal = abortOnClose(reply);
      const generate = (onToken?: (text: string) => void) =>
        core.generation.generate(history, options, onToken, signal);
      const head = () => ({ model: body.model, created_at: new Date().toISOString() });
      const finalMessage = (result: GenerateResult, content: string) => {
        const calls = callsOf(result, tools);
        return { role: "assistant", content, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
      };
      if (body.stream === false) {
        const result = await generate();
        return reply.send({
          ...head(),
          message: finalMessage(result, result.text),
          done: true,
          done_reason: doneReason(result, format.check),
          ...stats(result),
        });
      }
      const stream = new NdjsonChannel(reply);
      await streamed(stream, reply, async () => {
        const result = await withBatchedDeltas(
          (content) => stream.send({ ...head(), message: { role: "assistant", content }, done: false }),
          generate,
        );
        stream.send({
          ...head(),
          message: finalMessage(result, ""),
          done: true,
          done_reason: doneReason(result, format.check),
          ...stats(result),
        });
      });
      return reply;
    }),
  );

  app.post(
    "/api/generate",
    { bodyLimit: OPENAI_BODY_LIMIT },
    run(async (request, reply) => {
      const body = parseBody(GenerateRequest, request.body);
      checkThink(body.think);
      if (body.suffix) throw invalid("'suffix' (fill in the middle) is not supported by the local model.");
      if (body.template) throw invalid("'template' is not supported: the model's own chat template is used.");
      if (body.context?.length)
        throw invalid("'context' is not supported: send the conversation to /api/chat instead.");
      if (body.images?.length) throw invalid("'images': the local model does not take images.");
      checkLogprobs(body.logprobs);
      if (body.width != null || body.height != null || body.steps != null)
        throw invalid(
          "'width', 'height' and 'steps' are for image generation, which the local model does not do.",
        );
      const model = modelName(body.model);
      const prompt = body.prompt ?? "";
      if (prompt === "") {
        await resolveModelId(core, model);
        return reply.send({ ...loadAnswer(body.model), response: "" });
      }
      if (body.raw && body.system)
        throw invalid("'system' cannot be used with 'raw': a raw prompt is sent to the model as it is.");
      if (body.raw && !core.generation.canComplete)
        throw new OpenAiError(
          501,
          "server_error",
          "not_implemented",
          "This engine cannot continue raw prompts.",
        );
      const format = formatOptions(body.format);
      const turn = await resolveTurn(core, { model, routeText: prompt });
      const options = generateOptions(turn.loaded, turn.resolved, body.options, format.options, {});
      sendSeed(reply, options);
      const signal = abortOnClose(reply);
      const history = historyTurns([
        ...(body.system ? [{ role: "system" as const, content: body.system }] : []),
        { role: "user", content: prompt },
      ]);
      const generate = (onToken?: (text: string) => void) =>
        body.raw
          ? core.generation.complete(prompt, options, onToken, signal)
          : core.generation.generate(history, options, onToken, signal);
      const head = () => ({ model: body.model, created_at: new Date().toISOString() });
      if (body.stream === false) {
        const result = await generate();
        return reply.send({
          ...head(),
          response: result.text,
          done: true,
          done_reason: doneReason(result, format.check),
          ...stats(result),
        });
      }
      const stream = new NdjsonChannel(reply);
      await streamed(stream, reply, async () => {
        const result = await withBatchedDeltas(
          (response) => stream.send({ ...head(), response, done: false }),
          generate,
        );
        stream.send({
          ...head(),
          response: "",
          done: true,
          done_reason: doneReason(result, format.check),
          ...stats(result),
        });
      });
      return reply;
    }),
  );

  // Any model name embeds with the base model, as on /v1/embeddings (an index must not shift
  // with the adapter a request names), so clients' default embedding model names work.
  // As Ollama: a long input is cut to what the model takes unless `truncate` is false.
  const embed = async (texts: string[], reply: FastifyReply, truncate = true) => {
    if (!core.generation.loaded)
      throw new OpenAiError(503, "server_error", "model_not_loaded", "No model is loaded. Load one first.");
    if (!core.generation.canEmbed)
      throw new OpenAiError(501, "server_error", "not_implemented", "This engine cannot report embeddings.");
    return core.generation.embed(texts, abortOnClose(reply), truncate);
  };

  app.post(
    "/api/embed",
    { bodyLimit: OPENAI_BODY_LIMIT },
    run(async (request, reply) => {
      const body = parseBody(EmbedRequest, request.body);
      const texts = typeof body.input === "string" ? [body.input] : body.input;
      if (texts.some((t) => t === "")) throw invalid("'input' must not contain empty texts.");
      const started = performance.now();
      const { vectors, tokens } = await embed(texts, reply, body.truncate !== false);
      const size = vectors[0]?.length ?? 0;
      if (body.dimensions != null && body.dimensions !== size)
        throw invalid(
          `'dimensions' is ${body.dimensions}, but this model's embeddings have ${size}; leave it out or send ${size}.`,
        );
      return reply.send({
        model: body.model,
        embeddings: vectors,
        total_duration: Math.round((performance.now() - started) * 1e6),
        load_duration: 0,
        prompt_eval_count: tokens.reduce((sum, n) => sum + n, 0),
      });
    }),
  );

  app.post(
    "/api/embeddings",
    { bodyLimit: OPENAI_BODY_LIMIT },
    run(async (request, reply) => {
      const body = parseBody(EmbeddingsRequest, request.body);
      if (body.prompt === "") return reply.send({ embedding: [] });
      const { vectors } = await embed([body.prompt], reply);
      return reply.send({ embedding: vectors[0] ?? [] });
    }),
  );

  for (const path of NOT_SERVED) {
    // The client deletes with DELETE, the others POST.
    app.route({
      method: ["POST", "DELETE"],
      url: path,
      handler: (_request, reply) =>
        sendError(
          reply,
          new OpenAiError(
            501,
            "server_error",
            "not_implemented",
            `${path} is not served here: models and adapters are managed in Macaron (Models), and the loaded model is listed by /api/tags.`,
          ),
        ),
    });
  }
}

/** The calls the model made, in Ollama's shape (arguments as an object), checked against the tools. */
function callsOf(result: GenerateResult, tools: ToolRequest) {
  if (result.stopReason !== "toolCalls" || !result.toolCalls?.length) return [];
  return responseToolCalls(result.toolCalls, tools).map((call, index) => ({
    id: call.id,
    function: { index, name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown },
  }));
}

function generateOptions(
  loaded: LoadedModel,
  resolved: ResolvedSelection,
  options: Record<string, unknown> | null | undefined,
  format: Pick<GenerateOptions, "json" | "jsonSchema">,
  tools: ToolRequest,
): GenerateOptions {
  const toolFormat = tools.tools ? resolved.toolFormat : undefined;
  return {
    ...ollamaSampling(options, loaded),
    ...format,
    ...(resolved.adapters.length > 0 ? { adapters: resolved.adapters } : {}),
    kvPolicy: resolved.kvPolicy,
    ...tools,
    ...(toolFormat ? { toolFormat } : {}),
  };
}

/** Runs a streamed answer: a failure before the first line is a status, after it an error line. */
async function streamed(
  stream: NdjsonChannel,
  reply: FastifyReply,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
  } catch (error) {
    const failure = toOpenAiError(error);
    if (!stream.started) {
      void sendError(reply, failure);
      return;
    }
    stream.send(ollamaErrorBody(failure.message));
  }
  stream.end();
}
