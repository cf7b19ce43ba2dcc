/**
 * Why a file cannot be used:
 * - not_found: no file at that path (or it is a folder).
 * - unreadable: the file exists but cannot be read (permissions, I/O error).
 * - not_gguf: the file is not GGUF at all (wrong signature).
 * - truncated: the file ends before its declared contents (an unfinished download or copy).
 * - unsupported_version: a GGUF version or byte order this reader does not handle.
 * - corrupt: the structure is inconsistent (impossible counts, unknown types, bad offsets).
 * - not_a_model: a valid GGUF that is not a loadable base model (e.g. a LoRA adapter).
 * - incompatible_adapter: a LoRA adapter that does not fit the given base model.
 */
export type GgufErrorCode =
  | "not_found"
  | "unreadable"
  | "not_gguf"
  | "truncated"
  | "unsupported_version"
  | "corrupt"
  | "not_a_model"
  | "incompatible_adapter";

/** A GGUF problem whose `message` is a complete sentence meant for the user. */
export class GgufError extends Error {
  override readonly name = "GgufError";

  constructor(
    readonly code: GgufErrorCode,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

export function isGgufError(err: unknown): err is GgufError {
  return err instanceof GgufError;
}
