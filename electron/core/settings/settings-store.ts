import type { Database, Statement } from "better-sqlite3";

/** Small persistent key/value settings; values are stored as JSON. */
export class SettingsStore {
  private readonly getStmt: Statement<[string], { value: string }>;
  private readonly setStmt: Statement<[string, string]>;
  private readonly deleteStmt: Statement<[string]>;

  constructor(db: Database) {
    this.getStmt = db.prepare("SELECT value FROM settings WHERE key = ?");
    this.setStmt = db.prepare(
      "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    );
    this.deleteStmt = db.prepare("DELETE FROM settings WHERE key = ?");
  }

  /** The stored value, or undefined when absent or unreadable. */
  get(key: string): unknown {
    const row = this.getStmt.get(key);
    if (!row) return undefined;
    try {
      return JSON.parse(row.value) as unknown;
    } catch {
      return undefined;
    }
  }

  set(key: string, value: unknown): void {
    this.setStmt.run(key, JSON.stringify(value));
  }

  delete(key: string): void {
    this.deleteStmt.run(key);
  }
}
