import type { Result } from "../../electron/api";

/** The value of an ok Result; throws with the error's code and message otherwise. */
export function value<T>(result: Result<unknown>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value as T;
}
