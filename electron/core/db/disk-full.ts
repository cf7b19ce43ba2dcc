/**
 * A full disk, recognised wherever it surfaces: SQLite says SQLITE_FULL (better-sqlite3's
 * `code`, also when `PRAGMA max_page_count` is reached), file writes say ENOSPC (or EDQUOT
 * for a quota). Every such failure becomes the API error `disk_full` with a sentence that says
 * what happened and what to do, instead of "Internal error in chat.send."
 */
import { ApiError } from "../../api";

export const DISK_FULL_MESSAGE =
  "The disk is full, so Macaron could not save. Free some disk space, then try again: what was saved before is kept.";

/** The message an answer cut off by a full disk ends with (status "interrupted"). */
export const DISK_FULL_ANSWER_MESSAGE =
  "The disk is full: this answer was cut off where it could no longer be saved. Free some disk space, then answer again.";

const CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);

/** True when `err` (or an error it wraps as `cause`) is a full disk. */
export function isDiskFull(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    if (e instanceof ApiError) return e.code === "disk_full";
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export function diskFullError(): ApiError {
  return new ApiError("disk_full", DISK_FULL_MESSAGE);
}
