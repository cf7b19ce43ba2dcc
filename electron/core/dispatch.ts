import { ApiError, isMethodName, methods, type Result } from "../api";
import type { CallContext } from "./core-types";
import { describeIssues } from "../../common/zod-issues";
import { diskFullError, isDiskFull } from "./db/disk-full";
import type { Handlers } from "./handlers";

export type Log = (message: string, err: unknown) => void;

/**
 * Run one API call: validate the input, call its handler, validate the output.
 * Never throws: every failure becomes `{ok:false, error:{code, message}}`.
 */
export async function dispatch(
  handlers: Handlers,
  method: string,
  input: unknown,
  ctx: CallContext,
  log: Log = console.error,
): Promise<Result<unknown>> {
  if (!isMethodName(method)) {
    return {
      ok: false,
      error: { code: "unknown_method", message: `Unknown method: ${String(method).slice(0, 100)}` },
    };
  }
  const spec = methods[method];
  const parsed = spec.input.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      error: {
        code: "invalid_input",
        message: `Invalid input for ${method}: ${describeIssues(parsed.error)}`,
      },
    };
  }
  try {
    // The handler map is keyed by method; TypeScript cannot correlate the union here.
    const handler = handlers[method] as (input: unknown, ctx: CallContext) => unknown;
    const value = await handler(parsed.data, ctx);
    const checked = spec.output.safeParse(value);
    if (!checked.success) {
      // A bug on our side: report it as such rather than sending malformed data.
      log(`output of ${method} does not match its schema: ${describeIssues(checked.error)}`, value);
      return { ok: false, error: { code: "internal", message: `Internal error in ${method}.` } };
    }
    return { ok: true, value: checked.data };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: err.toJSON() };
    log(`${method} failed`, err);
    // SQLITE_FULL / ENOSPC: the user can act on it (free space), so it is not "internal".
    if (isDiskFull(err)) return { ok: false, error: diskFullError().toJSON() };
    return { ok: false, error: { code: "internal", message: `Internal error in ${method}.` } };
  }
}
