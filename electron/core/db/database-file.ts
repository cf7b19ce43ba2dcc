import type { Database } from "better-sqlite3";
import { copyFileSync, existsSync, renameSync } from "node:fs";
import { ApiError, type DatabaseStatus } from "../../api";
import { BackupFolder, fileStamp } from "./backups";
import { connectDatabase, databasePath } from "./database";
import { DatabaseFromFutureError } from "./errors";
import { migrate, schemaVersion } from "./migrate";
import { type Migration, migrations as allMigrations } from "./migrations";

export interface DatabaseFileOptions {
  dataDir: string;
  log: (message: string, err: unknown) => void;
  /** The migration list (tests inject a failing one). */
  migrations?: readonly Migration[];
}

/**
 * Open the app database: connect (integrity check), refuse a newer schema, back the file up
 * when an existing database is about to be migrated, then migrate (one transaction).
 */
export async function openAppDatabase(
  path: string,
  backups: BackupFolder,
  log: (message: string, err: unknown) => void,
  migrations: readonly Migration[] = allMigrations,
): Promise<Database> {
  const db = connectDatabase(path);
  try {
    const version = schemaVersion(db);
    const latest = migrations.at(-1)?.version ?? 0;
    if (version > latest) throw new DatabaseFromFutureError(version, latest);
    if (version > 0 && version < latest) {
      try {
        await backups.create(db, version);
      } catch (err) {
        // The migration itself is atomic; a full disk must not lock the user out of their chats.
        log(`could not back up the database before migrating it from schema ${version}`, err);
      }
    }
    migrate(db, migrations);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * The database file of a data folder and what became of opening it. When it cannot be used
 * (damaged, not a database, from a newer Macaron) core runs degraded: database.status explains,
 * and the user restores a backup or starts fresh. The bad file is moved aside, never deleted.
 */
export class DatabaseFile {
  readonly path: string;
  readonly backups: BackupFolder;
  private state: DatabaseStatus["state"] = "ok";
  private message: string | null = null;

  constructor(private readonly options: DatabaseFileOptions) {
    this.path = databasePath(options.dataDir);
    this.backups = new BackupFolder(options.dataDir);
  }

  /** Open (and migrate) the database; null when it is unusable (see status()). */
  async open(): Promise<Database | null> {
    try {
      const db = await openAppDatabase(this.path, this.backups, this.options.log, this.options.migrations);
      this.state = "ok";
      this.message = null;
      return db;
    } catch (err) {
      this.state = err instanceof DatabaseFromFutureError ? "from_future" : "corrupt";
      this.message = err instanceof Error ? err.message : String(err);
      this.options.log("the database cannot be used; starting without it", err);
      return null;
    }
  }

  get usable(): boolean {
    return this.state === "ok";
  }

  /** What the start-up found, with the backups the user can restore. */
  status(): DatabaseStatus {
    return {
      state: this.state,
      message: this.message,
      path: this.path,
      backups: this.backups.list().map((b) => ({ id: b.id, createdAt: b.createdAt, sizeBytes: b.sizeBytes })),
    };
  }

  /** The error every other method answers with while the database is unusable. */
  unavailable(): ApiError {
    return new ApiError(
      "database_unavailable",
      `The conversation database could not be opened: ${this.message ?? "unknown reason"}`,
    );
  }

  /**
   * Move the bad file aside and put a copy of backup `id` in its place, then open it.
   * Throws ApiError not_found for an unknown id; null when the copy cannot be opened either.
   */
  async restoreBackup(id: string): Promise<Database | null> {
    const backup = this.backups.find(id);
    if (!backup) throw new ApiError("not_found", `There is no backup called "${id.slice(0, 200)}".`);
    this.moveAside();
    // A copy: the backup stays as it was, whatever happens to the restored database.
    copyFileSync(backup.path, this.path);
    return this.open();
  }

  /** Move the bad file aside and open a new, empty database. */
  async startFresh(): Promise<Database | null> {
    this.moveAside();
    return this.open();
  }

  /** `macaron.db` (and its -wal/-shm, which belong to it) become `macaron.db.bad-<time>`. */
  private moveAside(): string | null {
    if (!existsSync(this.path)) return null;
    const target = `${this.path}.bad-${fileStamp()}`;
    renameSync(this.path, target);
    for (const suffix of ["-wal", "-shm"]) {
      if (existsSync(this.path + suffix)) renameSync(this.path + suffix, target + suffix);
    }
    this.options.log(`moved the unusable database aside to ${target}`, null);
    return target;
  }
}
