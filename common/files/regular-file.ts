/**
 * Paths that come from the API are opened only when they name a regular file. A FIFO opened
 * for reading blocks (a libuv thread) until something writes to it, and a device such as
 * /dev/zero never ends: both are refused at once, before anything opens them. Every check
 * here is a stat (never blocks); where a file must be opened it is opened with O_NONBLOCK and
 * checked again with fstat, so a file swapped for a FIFO after the stat cannot block either.
 *
 * Errors name the file as the caller was given it (`shown`), never a path resolved against
 * the server's working directory.
 */
import { constants, type Stats } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";

export type NotRegularReason = "missing" | "unreadable" | "folder" | "fifo" | "device" | "socket" | "other";

/** A path that is not a regular file (or cannot be looked at); `message` is a sentence for the user. */
export class NotRegularFileError extends Error {
  override readonly name = "NotRegularFileError";

  constructor(
    readonly reason: NotRegularReason,
    readonly shown: string,
    message: string,
    /** "a folder", "a named pipe (FIFO)", "a device", "a socket" (for the caller's own sentence). */
    readonly what: string = "not a regular file",
  ) {
    super(message);
  }
}

export function isNotRegularFileError(err: unknown): err is NotRegularFileError {
  return err instanceof NotRegularFileError;
}

/** How a path is named in messages: quoted, as given. */
export function quotedPath(shown: string): string {
  return `"${shown}"`;
}

/** What a non-regular file is, or null for a regular file. */
function kindOf(info: Stats): { reason: NotRegularReason; what: string } | null {
  if (info.isFile()) return null;
  if (info.isDirectory()) return { reason: "folder", what: "a folder" };
  if (info.isFIFO()) return { reason: "fifo", what: "a named pipe (FIFO)" };
  if (info.isCharacterDevice() || info.isBlockDevice()) return { reason: "device", what: "a device" };
  if (info.isSocket()) return { reason: "socket", what: "a socket" };
  return { reason: "other", what: "not a regular file" };
}

function refuse(info: Stats, shown: string): void {
  const kind = kindOf(info);
  if (!kind) return;
  const sentence =
    kind.reason === "other"
      ? `${quotedPath(shown)} is not a regular file.`
      : `${quotedPath(shown)} is ${kind.what}, not a regular file.`;
  throw new NotRegularFileError(kind.reason, shown, sentence, kind.what);
}

function fromErrno(err: unknown, shown: string): NotRegularFileError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR")
    return new NotRegularFileError("missing", shown, `${quotedPath(shown)} was not found.`);
  const why = code === "EACCES" || code === "EPERM" ? "permission denied" : (code ?? "unknown error");
  return new NotRegularFileError("unreadable", shown, `${quotedPath(shown)} cannot be read (${why}).`);
}

/**
 * Stat `path` (following links: a link to a model file is fine) and return its Stats when it
 * is a regular file. Throws NotRegularFileError otherwise. Never opens the file.
 */
export async function statRegularFile(path: string, shown: string = path): Promise<Stats> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (err) {
    throw fromErrno(err, shown);
  }
  refuse(info, shown);
  return info;
}

/** Like statRegularFile, but null when nothing is at `path`. */
export async function statRegularFileIfExists(path: string, shown: string = path): Promise<Stats | null> {
  try {
    return await statRegularFile(path, shown);
  } catch (err) {
    if (err instanceof NotRegularFileError && err.reason === "missing") return null;
    throw err;
  }
}

/** O_NONBLOCK where the platform has it (not on Windows, which has no FIFOs of this kind). */
const READ_NONBLOCK = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Open `path` for reading when it is a regular file: stat first, then open with O_NONBLOCK
 * (an open of a FIFO returns at once instead of waiting for a writer) and fstat the handle to
 * close the race with a file replaced between the two. The caller closes the handle.
 */
export async function openRegularFile(
  path: string,
  shown: string = path,
): Promise<{ handle: FileHandle; info: Stats }> {
  await statRegularFile(path, shown);
  let handle: FileHandle;
  try {
    handle = await open(path, READ_NONBLOCK);
  } catch (err) {
    throw fromErrno(err, shown);
  }
  try {
    const info = await handle.stat();
    refuse(info, shown);
    return { handle, info };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err instanceof NotRegularFileError ? err : fromErrno(err, shown);
  }
}

/** Read a regular file as UTF-8 text (refusing FIFOs, devices and folders at once). */
export async function readRegularTextFile(path: string, shown: string = path): Promise<string> {
  const { handle } = await openRegularFile(path, shown);
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}
