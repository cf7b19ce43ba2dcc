import type { Database } from "better-sqlite3";

/** Schema v2: small key/value settings (e.g. the last opened model), values as JSON text. */
export function migrate0002(db: Database): void {
  db.exec(`
    CREATE TABLE settings (
      key TEXT PRIMARY KEY NOT NULL,
      value TEXT NOT NULL
    );
  `);
}
