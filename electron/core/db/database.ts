import BetterSqlite3, { type Database } from "better-sqlite3";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { makePrivateSync, PRIVATE_FILE_MODE } from "../../../common/files/private-files";
import { join } from "node:path";
import { DatabaseOpenError } from "./errors";
import { migrate } from "./migrate";

export const DATABASE_FILE = "macaron.db";

/** Path of the app database inside a data directory. */
export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

/**
 * Open (or create) the database at `path` (":memory:" for tests), set the connection pragmas
 * and apply pending migrations. Throws DatabaseOpenError for a file that is not a database
 * (or fails its integrity check) and DatabaseFromFutureError for a newer schema; the file is
 * never deleted or rewritten then. Core opens through openAppDatabase (backup first).
 */
export function openDatabase(path: string): Database {
  const db = connectDatabase(path);
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

const SQLITE_MAGIC = "SQLite format 3\0";

/**
 * Check an existing file before SQLite writes anything beside it: the header must be
 * SQLite's, and `PRAGMA quick_check` must pass on a read-only connection. A damaged database
 * often opens fine and fails only when a damaged page is read, which must not happen in the
 * middle of a chat. Read-only and header-first because a read-write connection to a bad file
 * deletes or checkpoints its -wal on close: the user's last writes may be in there.
 */
function checkExisting(path: string): void {
  let header: Buffer;
  try {
    if (statSync(path).size === 0) return; // SQLite treats an empty file as a new database
    const fd = openSync(path, "r");
    try {
      header = Buffer.alloc(SQLITE_MAGIC.length);
      readSync(fd, header, 0, header.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (header.toString("latin1") !== SQLITE_MAGIC) throw new Error("file is not a database");
  let db: Database;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw err instanceof Error ? err : new Error(String(err));
  }
  try {
    db.pragma("schema_version");
    const problems = db.pragma("quick_check") as { quick_check: string }[];
    const found = problems.map((p) => p.quick_check).filter((p) => p !== "ok");
    if (found.length > 0)
      throw new Error(`the file is damaged (integrity check: ${found.slice(0, 3).join("; ")})`);
  } catch (err) {
    // A read-only connection cannot roll back a hot journal: the read-write open will.
    if (!String((err as { code?: unknown }).code).startsWith("SQLITE_READONLY")) throw err;
  } finally {
    db.close();
  }
}

/**
 * The database holds every conversation: it is created 0600 (an empty file, which SQLite
 * treats as a new database) rather than SQLite's 0644, and an existing one is made 0600.
 */
function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE_MODE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  makePrivateSync(path, `${path}-wal`, `${path}-shm`);
}

/** Open a connection with the app's pragmas, without migrating; files are checked first. */
export function connectDatabase(path: string): Database {
  if (path !== ":memory:") {
    try {
      checkExisting(path);
      createPrivate(path);
    } catch (err) {
      throw new DatabaseOpenError(path, err);
    }
  }
  let db: Database;
  try {
    db = new BetterSqlite3(path);
  } catch (err) {
    throw new DatabaseOpenError(path, err);
  }
  try {
    // Reading the schema first makes SQLite parse the header: a non-database fails here,
    // before journal_mode=WAL could create -wal/-shm files beside it.
    db.pragma("schema_version");
    db.pragma("journal_mode = WAL");
    // FULL (not WAL's usual NORMAL): a committed message must survive a power loss. We commit
    // rarely (a message, a throttled partial answer, never per token), so the fsync is cheap.
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    // Readers/writers from another connection (e.g. a backup tool) wait instead of failing.
    db.pragma("busy_timeout = 5000");
  } catch (err) {
    db.close();
    throw new DatabaseOpenError(path, err);
  }
  return db;
}
