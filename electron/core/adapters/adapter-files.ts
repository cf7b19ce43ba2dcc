/**
 * Adapter files in the app's adapters folder: copied in under a temp name and renamed, so the
 * folder never holds a half-written adapter; a copy cut short by a killed process leaves only
 * a temp file, which the next start deletes.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, type Stats } from "node:fs";
import { mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { ApiError } from "../../api";
import { isDiskFull } from "../db/disk-full";
import { PRIVATE_FILE_MODE } from "../../../common/files/private-files";
import {
  isNotRegularFileError,
  openRegularFile,
  quotedPath,
  statRegularFile,
} from "../../../common/files/regular-file";

/** Temp names of copies in progress (`.install-` and `.version-` are the names older builds used). */
const UNFINISHED_COPY = /^\.(copy|install|version)-[0-9a-f]{12}\.tmp$/;

/**
 * Copy `src` (`size` bytes) into `dir` as `name`: a temp file in the same folder first, then a
 * rename. Returns the new path. Throws ApiError("internal") naming `what` when it fails (a full
 * disk, say); nothing is left behind then. The source is opened as a regular file (O_NONBLOCK,
 * checked on the handle), not with copyFile: a file swapped for a FIFO after its checks would
 * otherwise block the copy, and a libuv thread, until something wrote to it.
 */
export async function copyIntoFolder(
  src: string,
  dir: string,
  name: string,
  size: number,
  what: string,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const dest = join(dir, name);
  const temp = join(dir, `.copy-${randomBytes(6).toString("hex")}.tmp`);
  try {
    const { handle } = await openRegularFile(src);
    try {
      await pipeline(
        handle.createReadStream({ autoClose: false }),
        createWriteStream(temp, { flags: "wx", mode: PRIVATE_FILE_MODE }),
      );
    } finally {
      await handle.close().catch(() => undefined);
    }
    const copied = await stat(temp);
    if (copied.size !== size) throw new Error(`copied ${copied.size} of ${size} bytes`);
    await rename(temp, dest);
    return dest;
  } catch (err) {
    await rm(temp, { force: true });
    if (isNotRegularFileError(err) && err.reason !== "missing" && err.reason !== "unreadable")
      throw new ApiError("invalid_input", err.message);
    if (isDiskFull(err)) {
      throw new ApiError(
        "disk_full",
        `The disk is full: the ${what} could not be copied into ${dir}. Free some disk space, then try again.`,
      );
    }
    throw new ApiError("internal", `Could not copy the ${what} into ${dir}: ${(err as Error).message}`);
  }
}

/** Delete the temp files of copies a killed process left in `dir`. Returns how many. Never throws. */
export async function removeUnfinishedCopies(dir: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!UNFINISHED_COPY.test(name)) continue;
    await rm(join(dir, name), { force: true }).catch(() => undefined);
    removed++;
  }
  return removed;
}

/**
 * Stats of the adapter file at `path` (resolved) when it is a regular file. Throws
 * ApiError("invalid_input") naming it as `given` (the caller's own path, never one resolved
 * against the server's working directory) for a missing file, a folder, a FIFO, a device or a
 * socket, at once: nothing is opened.
 */
export async function checkAdapterFile(path: string, given: string = path): Promise<Stats> {
  try {
    return await statRegularFile(path, given);
  } catch (err) {
    if (!isNotRegularFileError(err)) throw err;
    if (err.reason === "missing") throw new ApiError("invalid_input", `No file at ${quotedPath(given)}.`);
    if (err.reason === "unreadable") throw new ApiError("invalid_input", err.message);
    throw new ApiError("invalid_input", `${quotedPath(given)} is ${err.what}, not an adapter file.`);
  }
}
