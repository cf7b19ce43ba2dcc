import type { Database } from "better-sqlite3";
import { DatabaseFromFutureError } from "./errors";
import { type Migration, migrations as allMigrations } from "./migrations";

export function schemaVersion(db: Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/**
 * Apply every pending migration in ONE transaction, so that a failure leaves the file exactly
 * as it was (user_version lives in the database header and rolls back with the rest).
 * Returns the versions applied. Refuses a database from a newer app version.
 */
export function migrate(db: Database, migrations: readonly Migration[] = allMigrations): number[] {
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const current = schemaVersion(db);
  if (current > latest) throw new DatabaseFromFutureError(current, latest);
  const pending = migrations.filter((m) => m.version > current);
  if (pending.length === 0) return [];
  db.transaction(() => {
    for (const m of pending) {
      m.up(db);
      // The version is an integer from our own list, never user input.
      db.pragma(`user_version = ${Math.trunc(m.version)}`);
    }
  }).immediate();
  return pending.map((m) => m.version);
}
