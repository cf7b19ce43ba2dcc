import type { ErrorCode } from "../api";

/** HTTP status for each API error code: the envelope carries the detail, the status lets proxies and curl users see the class. */
const statusByCode: Partial<Record<ErrorCode, number>> = {
  invalid_input: 400,
  context_length_exceeded: 400,
  unknown_method: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  busy: 409,
  no_model: 422,
  model_invalid: 422,
  model_load_failed: 422,
  engine_crashed: 503,
  // 507 Insufficient Storage: the server cannot store what the request needs.
  disk_full: 507,
  // 502 Bad Gateway: the model hub failed or answered something unusable.
  upstream: 502,
};

export function httpStatusFor(code: ErrorCode): number {
  return statusByCode[code] ?? 500;
}
