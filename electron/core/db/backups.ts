import type { Database } from "better-sqlite3";
import { readdirSync, rmSync, statSync } from "node:fs";
import { ensurePrivateDirSync, makePrivateSync } from "../../../common/files/private-files";
import { join } from "node:path";

/** How many backups are kept; older ones are removed when a new one is written. */
export const KEEP_BACKUPS = 5;

const NAME = /^macaron-v(\d+)-(\d{8}T\d{9})Z\.db$/;

export interface BackupInfo {
  /** The file name: the id the UI sends back to restore it. */
  id: string;
  path: string;
  schemaVersion: number;
  createdAt: number;
  sizeBytes: number;
}

/** A sortable UTC time stamp for file names, e.g. 20250102T030405678Z (no ":" for Windows). */
export function fileStamp(now = Date.now()): string {
  return new Date(now).toISOString().replace(/[-:.]/g, "");
}

function parseStamp(stamp: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})$/.exec(stamp);
  if (!m) return 0;
  const n = m.slice(1).map(Number);
  return Date.UTC(n[0] ?? 0, (n[1] ?? 1) - 1, n[2], n[3], n[4], n[5], n[6]);
}

/**
 * `<dataDir>/backups`: copies of the database taken before a migration changes its schema,
 * named `macaron-v<old version>-<time>.db`. Only the last KEEP_BACKUPS are kept.
 */
export class BackupFolder {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, "backups");
  }

  /** Every backup, newest first. */
  list(): BackupInfo[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const found: BackupInfo[] = [];
    for (const name of names) {
      const m = NAME.exec(name);
      if (!m) continue;
      const path = join(this.dir, name);
      try {
        const stat = statSync(path);
        if (!stat.isFile()) continue;
        found.push({
          id: name,
          path,
          schemaVersion: Number(m[1]),
          createdAt: parseStamp(m[2]!),
          sizeBytes: stat.size,
        });
      } catch {
        // Removed meanwhile.
      }
    }
    return found.sort((a, b) => b.createdAt - a.createdAt || b.id.localeCompare(a.id));
  }

  /** The backup with this id (a file name from list(); anything else, e.g. a path, is unknown). */
  find(id: string): BackupInfo | null {
    return this.list().find((b) => b.id === id) ?? null;
  }

  /**
   * Copy the open database (consistently, WAL included: SQLite's online backup) before its
   * schema version `version` is migrated, then prune to the last KEEP_BACKUPS.
   */
  async create(db: Database, version: number, now = Date.now()): Promise<BackupInfo> {
    ensurePrivateDirSync(this.dir);
    let stampTime = now;
    let name = `macaron-v${Math.trunc(version)}-${fileStamp(stampTime)}.db`;
    // Two backups in the same millisecond (tests) must not overwrite each other.
    while (this.find(name)) name = `macaron-v${Math.trunc(version)}-${fileStamp(++stampTime)}.db`;
    const path = join(this.dir, name);
    await db.backup(path);
    makePrivateSync(path);
    this.prune();
    return this.find(name) ?? { id: name, path, schemaVersion: version, createdAt: stampTime, sizeBytes: 0 };
  }

  private prune(): void {
    for (const old of this.list().slice(KEEP_BACKUPS)) rmSync(old.path, { force: true });
  }
}
