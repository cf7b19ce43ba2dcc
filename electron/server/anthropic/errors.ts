/**
 * Errors in the shape Anthropic clients parse: `{type:"error", error:{type, message}}`. Handlers
 * build the internal OpenAiError (status, code, message, param) like every /v1 endpoint and
 * re-shape it here, so statuses and messages stay the same across the protocols.
 */
import type { FastifyReply } from "fastify";
import type { OpenAiError } from "../openai/errors";

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string };
}

/** Anthropic's error type for an HTTP status (their documented table). */
export function anthropicErrorType(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

export function anthropicErrorBody(status: number, message: string): AnthropicErrorBody {
  return { type: "error", error: { type: anthropicErrorType(status), message } };
}

export function sendAnthropicError(reply: FastifyReply, error: OpenAiError) {
  return reply
    .code(error.status)
    .type("application/json")
    .send(anthropicErrorBody(error.status, error.message));
}

/** Anthropic's endpoints under /v1 (their errors take Anthropic's shape, the rest OpenAI's). */
export function isAnthropicPath(path: string): boolean {
  return path === "/v1/messages" || path.startsWith("/v1/messages/");
}
