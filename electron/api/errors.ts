import { z } from "zod";

/** Every failure that crosses a transport has one of these codes and a sentence for the user. */
export const ErrorCode = z.enum([
  "invalid_input",
  "unknown_method",
  "not_found",
  "unauthorized",
  "forbidden",
  "no_model",
  "model_invalid",
  "model_load_failed",
  "busy",
  "engine_crashed",
  "aborted",
  "database_unavailable",
  /** A write failed because the disk (or the database's size limit) is full. */
  "disk_full",
  /** The prompt (or an embedding input) is longer than the loaded model's context. */
  "context_length_exceeded",
  /** A server the app depends on (the model hub) failed or answered something unusable. */
  "upstream",
  "internal",
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ApiErrorShape = z.object({
  code: ErrorCode,
  message: z.string(),
});
export type ApiErrorShape = z.infer<typeof ApiErrorShape>;

/** Thrown by handlers and clients; serialized as `{ok:false, error:{code,message}}`. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
  toJSON(): ApiErrorShape {
    return { code: this.code, message: this.message };
  }
}

/** The result envelope every call returns, on every transport. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ApiErrorShape };

export const ResultShape = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: ApiErrorShape }),
]);
