/**
 * The data folder and what holds the user's conversations (the database and its -wal/-shm,
 * backups, saved KV states) are private to the user: folders 0700, files 0600. Set with
 * chmod after creating, so the result does not depend on the process umask, and applied to
 * files an older build created 0644. No-ops where the platform has no such modes (Windows).
 */
import { chmodSync, mkdirSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

function missing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** Create `dir` (and its parents) if needed and make it 0700. */
export function ensurePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Create `dir` (and its parents) if needed and make it 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmod(dir, PRIVATE_DIR_MODE);
}

/** Make each existing file of `paths` 0600; missing ones are skipped. */
export function makePrivateSync(...paths: string[]): void {
  for (const path of paths) {
    try {
      chmodSync(path, PRIVATE_FILE_MODE);
    } catch (err) {
      if (!missing(err)) throw err;
    }
  }
}

/** Make each existing file of `paths` 0600; missing ones are skipped. */
export async function makePrivate(...paths: string[]): Promise<void> {
  for (const path of paths) {
    await chmod(path, PRIVATE_FILE_MODE).catch((err: unknown) => {
      if (!missing(err)) throw err;
    });
  }
}
