/**
 * What every generating endpoint under /v1 shares (chat completions, completions, responses,
 * Anthropic messages): core's generation service, the model id resolved to a base or adapter
 * selection, errors in one internal form (OpenAiError, re-shaped per protocol), and
 * cancellation when the client goes away.
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import { ApiError } from "../../api";
import type { AdapterSelection } from "../../api";
import type { Core, ResolvedSelection } from "../../core/core-types";
import type { GenerateResult, LoadedModel } from "../../core/engine/types";
import { fromApiErrorCode, OpenAiError } from "./errors";
import { misfitMessage, selectionForModel } from "./models";

/**
 * The services a /v1 handler gets. Generations go through `core.generation`: in arrival order
 * for all endpoints, as many at once as the loaded context has sequences when the engine batches
 * them (one at a time otherwise), the rest waiting their turn.
 */
export interface V1Context {
  core: Core;
}

export function createV1Context(core: Core): V1Context {
  return { core };
}

export interface TurnTarget {
  /** The request's model id (`auto`, the base's id, an adapter id). */
  model: string;
  /** Non-standard blend that overrides the model's choice (adapter id → scale). */
  adapters?: Record<string, number> | null;
  /** The text the router decides on (the last user message). */
  routeText: string;
}

export interface ResolvedTurn {
  loaded: LoadedModel;
  resolved: ResolvedSelection;
}

/**
 * The loaded model and the adapters that answer `target`. Throws OpenAiError: 503
 * model_not_loaded, 400 model_not_compatible (an adapter for another base), 404
 * model_not_found, 400 for a bad blend (param "adapters").
 */
export async function resolveTurn(core: Core, target: TurnTarget): Promise<ResolvedTurn> {
  const { loaded, selection } = await resolveModelId(core, target.model);
  try {
    const resolved = await core.adapters.resolve(
      target.adapters ? { blend: target.adapters } : selection,
      target.routeText,
    );
    return { loaded, resolved };
  } catch (error) {
    const failure = toOpenAiError(error);
    if (failure.status !== 400) throw failure;
    throw new OpenAiError(
      400,
      "invalid_request_error",
      "invalid_request",
      failure.message,
      target.adapters ? "adapters" : "model",
    );
  }
}

/**
 * The loaded model and what the request's model id selects, without resolving adapters (for
 * /v1/embeddings, which always embeds with the base but still refuses ids that do not exist).
 * Throws OpenAiError as resolveTurn does.
 */
export async function resolveModelId(
  core: Core,
  model: string,
): Promise<{ loaded: LoadedModel; selection: AdapterSelection }> {
  const loaded = core.generation.loaded;
  if (!loaded) {
    throw new OpenAiError(503, "server_error", "model_not_loaded", "No model is loaded. Load one first.");
  }
  const enabled = await core.adapters.listEnabled();
  const misfit = misfitMessage(model, enabled, loaded.path);
  if (misfit) throw new OpenAiError(400, "invalid_request_error", "model_not_compatible", misfit, "model");
  const selection = selectionForModel(model, loaded.path, new Set(enabled.map((a) => a.id)));
  if (!selection) {
    throw new OpenAiError(
      404,
      "invalid_request_error",
      "model_not_found",
      `The model '${model}' does not exist. See GET /v1/models.`,
      "model",
    );
  }
  return { loaded, selection };
}

/**
 * Token counts of a generation: the engine's exact prompt length when it reports one, else
 * what the context holds less the answer (exact for a stateless turn without a reused cache).
 */
export function usageOf(result: GenerateResult): {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
} {
  const promptTokens =
    result.promptTokens ?? Math.max(result.contextTokens - result.tokens, result.promptTokensEvaluated, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: result.tokens,
    total_tokens: promptTokens + result.tokens,
  };
}

/**
 * An engine error re-pointed at the request field it concerns: the engine's
 * context_length_exceeded names `messages`, which on /v1/completions is `prompt` and on
 * /v1/embeddings `input`.
 */
export function withParam(error: OpenAiError, param: string): OpenAiError {
  if (error.code !== "context_length_exceeded") return error;
  return new OpenAiError(error.status, error.type, error.code, error.message, param);
}

/**
 * Any failure as OpenAiError (engine and core errors by their code; anything else a 500). An
 * unexpected error is logged (stderr) under a fresh error id that the 500's message carries, so
 * a user's report can be matched to the log line with the stack.
 */
export function toOpenAiError(error: unknown): OpenAiError {
  if (error instanceof OpenAiError) return error;
  if (error instanceof ApiError) return fromApiErrorCode(error.code, error.message);
  const id = logUnexpected(error);
  return new OpenAiError(
    500,
    "server_error",
    "internal",
    `The generation failed (error id ${id}; the server's log has the details).`,
  );
}

/** Logs an unexpected error with a fresh id (`err_…`) and returns the id. */
export function logUnexpected(error: unknown, id: string = newId("err_")): string {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  console.error(`[macaron] unexpected error ${id}: ${detail}`);
  return id;
}

/** A signal that fires when the client goes away before the answer ended. */
export function abortOnClose(reply: FastifyReply): AbortSignal {
  const abort = new AbortController();
  reply.raw.on("close", () => {
    if (!reply.raw.writableEnded) abort.abort();
  });
  return abort.signal;
}

/** `chatcmpl-…`, `cmpl-…`, `resp_…`, `msg_…`: a random id with the protocol's prefix. */
export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}

/** Seconds since the epoch (OpenAI's `created`). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * A requested answer length against the loaded context: more than the context holds gets a 400
 * naming `param` (the engine further stops where the context is full).
 */
export function checkMaxTokens(value: number | null | undefined, loaded: LoadedModel, param: string): void {
  if (value == null || value <= loaded.contextSize) return;
  throw new OpenAiError(
    400,
    "invalid_request_error",
    "invalid_request",
    `'${param}' is ${value}, but the loaded model's context holds ${loaded.contextSize} tokens (prompt and answer together).`,
    param,
  );
}
