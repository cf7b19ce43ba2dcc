/** Errors in the shape OpenAI clients parse: `{error:{message, type, param, code}}`. */
import type { FastifyReply } from "fastify";
import type { ErrorCode } from "../../api";

export type OpenAiErrorType =
  "invalid_request_error" | "authentication_error" | "permission_error" | "rate_limit_error" | "server_error";

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null };
}

export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    readonly type: OpenAiErrorType,
    readonly code: string | null,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "OpenAiError";
  }

  toBody(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function sendOpenAiError(reply: FastifyReply, error: OpenAiError) {
  return reply.code(error.status).type("application/json").send(error.toBody());
}

/** Translates the app API's error codes (from the engine) into OpenAI's statuses and types. */
export function fromApiErrorCode(code: ErrorCode, message: string): OpenAiError {
  switch (code) {
    case "invalid_input":
      return new OpenAiError(400, "invalid_request_error", "invalid_request", message);
    case "context_length_exceeded":
      return new OpenAiError(400, "invalid_request_error", "context_length_exceeded", message, "messages");
    case "busy":
      // 429 makes OpenAI clients back off and retry on their own.
      return new OpenAiError(429, "rate_limit_error", "busy", message);
    case "no_model":
      return new OpenAiError(503, "server_error", "model_not_loaded", message);
    case "engine_crashed":
      return new OpenAiError(503, "server_error", "engine_crashed", message);
    case "unauthorized":
      return new OpenAiError(401, "authentication_error", "invalid_api_key", message);
    case "forbidden":
      return new OpenAiError(403, "permission_error", "forbidden", message);
    case "not_found":
      return new OpenAiError(404, "invalid_request_error", "not_found", message);
    case "disk_full":
      return new OpenAiError(507, "server_error", "disk_full", message);
    default:
      return new OpenAiError(500, "server_error", code, message);
  }
}
