import { statSync } from "node:fs";
import { stat } from "node:fs/promises";
import { sha256File } from "../../../common/hashing";
import type { SettingsStore } from "../settings/settings-store";

export const SHA_CACHE_KEY = "models.sha256";

interface CacheEntry {
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** Files remembered; the oldest entries go when there are more. */
const MAX_CACHED = 32;

/**
 * The sha256 of each loaded model file, for the turn records. Hashing a multi-GB model takes
 * seconds, so it runs once per file in the background after a load and is remembered in the
 * settings by path + size + mtime; turns read the known value and never wait for it.
 */
export class ModelFingerprint {
  private readonly known = new Map<string, string>();
  private readonly running = new Map<string, Promise<string>>();

  constructor(
    private readonly settings: SettingsStore,
    private readonly hash: (path: string) => Promise<string> = sha256File,
  ) {}

  /** The sha256 of `path` if already computed in this session, else null. */
  knownSha256(path: string): string | null {
    return this.known.get(path) ?? null;
  }

  /**
   * The sha256 of `path` without hashing: computed in this session, or remembered from an
   * earlier one for the file as it is now (same size and mtime); else null.
   */
  cachedSha256(path: string): string | null {
    const known = this.known.get(path);
    if (known) return known;
    const hit = this.cache()[path];
    if (!hit) return null;
    try {
      const info = statSync(path);
      return info.size === hit.size && info.mtimeMs === hit.mtimeMs ? hit.sha256 : null;
    } catch {
      return null;
    }
  }

  /** The sha256 of `path`: from the cache when the file is unchanged, else hashed (once). */
  sha256(path: string): Promise<string> {
    let run = this.running.get(path);
    if (!run) {
      run = this.compute(path).finally(() => this.running.delete(path));
      this.running.set(path, run);
    }
    return run;
  }

  private async compute(path: string): Promise<string> {
    const info = await stat(path);
    const cache = this.cache();
    const hit = cache[path];
    if (hit && hit.size === info.size && hit.mtimeMs === info.mtimeMs) {
      this.known.set(path, hit.sha256);
      return hit.sha256;
    }
    const sha256 = await this.hash(path);
    this.store(path, info, sha256);
    return sha256;
  }

  /**
   * Record a sha256 computed elsewhere for the file as it is now (a verified download), so the
   * first load of a multi-GB model does not hash it again.
   */
  async remember(path: string, sha256: string): Promise<void> {
    this.store(path, await stat(path), sha256);
  }

  private store(path: string, info: { size: number; mtimeMs: number }, sha256: string): void {
    this.known.set(path, sha256);
    const next = { ...this.cache(), [path]: { size: info.size, mtimeMs: info.mtimeMs, sha256 } };
    const paths = Object.keys(next);
    for (const old of paths.slice(0, Math.max(0, paths.length - MAX_CACHED))) delete next[old];
    this.settings.set(SHA_CACHE_KEY, next);
  }

  private cache(): Record<string, CacheEntry> {
    const value = this.settings.get(SHA_CACHE_KEY);
    return typeof value === "object" && value !== null ? (value as Record<string, CacheEntry>) : {};
  }
}
