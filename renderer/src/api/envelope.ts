/**
 * Shared by both transports: turning a result envelope into a value or an ApiError, and
 * checking pushed events against the contract before the stores see them.
 */
import { ApiError, ResultShape, events } from "../../../electron/api";
import type { EventName, EventPayload } from "../../../electron/api";

/** Return the envelope's value, or throw the ApiError it carries (or one for a malformed envelope). */
export function unwrapResult<T>(raw: unknown): T {
  const parsed = ResultShape.safeParse(raw);
  if (!parsed.success) {
    throw new ApiError("internal", "The server sent a malformed answer.");
  }
  const result = parsed.data;
  if (result.ok) return result.value as T;
  throw new ApiError(result.error.code, result.error.message);
}

/** The payload parsed by the event's schema, or null when it does not match (it is dropped). */
export function parseEvent<E extends EventName>(event: E, payload: unknown): EventPayload<E> | null {
  const parsed = events[event].safeParse(payload);
  return parsed.success ? (parsed.data as EventPayload<E>) : null;
}

/** A sentence for the user from anything a call may reject with. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error && error.message) return error.message;
  return "Something went wrong.";
}
