import BetterSqlite3, { type Database } from "better-sqlite3";
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
 * and DatabaseFromFutureError for a newer schema; the file is never deleted or rewritten then.
 */
export function openDatabase(path: string): Database {
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
  try {
    migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}
