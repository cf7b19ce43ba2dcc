/**
 * What every generating endpoint under /v1 shares (chat completions, completions, responses,
 * Anthropic messages): one queue for the engine, the model id resolved to a base or adapter
 * selection, errors in one internal form (OpenAiError, re-shaped per protocol), and
 * cancellation when the client goes away.
 */
import { randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";
import { ApiError } from "../../api";
import type { Core, ResolvedSelection } from "../../core/core-types";
import type { LoadedModel } from "../../core/engine/types";
import { fromApiErrorCode, OpenAiError } from "./errors";
import { GenerationQueue } from "./generation-queue";
import { misfitMessage, selectionForModel } from "./models";

/** The services a /v1 handler gets: one queue for all endpoints, so generations never interleave. */
export interface V1Context {
  core: Core;
  queue: GenerationQueue;
}

export function createV1Context(core: Core): V1Context {
  return { core, queue: new GenerationQueue() };
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
  const loaded = core.engine.loaded;
  if (!loaded) {
    throw new OpenAiError(503, "server_error", "model_not_loaded", "No model is loaded. Load one first.");
  }
  const enabled = await core.adapters.listEnabled();
  const misfit = misfitMessage(target.model, enabled, loaded.path);
  if (misfit) throw new OpenAiError(400, "invalid_request_error", "model_not_compatible", misfit, "model");
  const selection = selectionForModel(target.model, loaded.path, new Set(enabled.map((a) => a.id)));
  if (!selection) {
    throw new OpenAiError(
      404,
      "invalid_request_error",
      "model_not_found",
      `The model '${target.model}' does not exist. See GET /v1/models.`,
      "model",
    );
  }
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

/** Any failure as OpenAiError (engine and core errors by their code; anything else a 500). */
export function toOpenAiError(error: unknown): OpenAiError {
  if (error instanceof OpenAiError) return error;
  if (error instanceof ApiError) return fromApiErrorCode(error.code, error.message);
  return new OpenAiError(500, "server_error", "internal", "The generation failed.");
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
