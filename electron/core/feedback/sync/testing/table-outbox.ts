/**
 * An Outbox over a real SQLite table, for the sync's tests and benchmark (the app's own outbox
 * lives with the feedback capture). Several instances may open the same file: that is how the
 * tests play "the app was killed and started again".
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import type { FeedbackItem } from "../../../../../cloud/protocol";
import type { Outbox, OutboxEntry } from "../../outbox-types";

export class TableOutbox implements Outbox {
  readonly db: Database;

  constructor(path: string) {
    this.db = new BetterSqlite3(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(`CREATE TABLE IF NOT EXISTS outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      key TEXT NOT NULL UNIQUE,
      json TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT,
      rejected_reason TEXT,
      delivered_at INTEGER
    )`);
  }

  /** Queues items in one transaction (the real outbox writes them with the feedback event). */
  enqueue(items: FeedbackItem[], at = Date.now()): void {
    const insert = this.db.prepare("INSERT INTO outbox (key, json, created_at) VALUES (?, ?, ?)");
    this.db.transaction(() => {
      for (const item of items) insert.run(item.idempotencyKey, JSON.stringify(item), at);
    })();
  }

  peekBatch(maxItems: number, maxBytes: number): OutboxEntry[] {
    const rows = this.db
      .prepare(
        "SELECT key, json, attempts, created_at AS createdAt FROM outbox WHERE rejected_reason IS NULL AND delivered_at IS NULL ORDER BY seq LIMIT ?",
      )
      .all(maxItems) as { key: string; json: string; attempts: number; createdAt: number }[];
    const out: OutboxEntry[] = [];
    let bytes = 2;
    for (const r of rows) {
      bytes += Buffer.byteLength(r.json) + 1;
      // A single item over the cap still goes (alone): the server's 413 then rejects it.
      if (bytes > maxBytes && out.length > 0) break;
      out.push({ key: r.key, item: JSON.parse(r.json) as FeedbackItem, attempts: r.attempts, createdAt: r.createdAt });
    }
    return out;
  }

  markDelivered(keys: string[], at: number): void {
    const del = this.db.prepare("DELETE FROM outbox WHERE key = ?");
    this.db.transaction(() => keys.forEach((k) => del.run(k)))();
    void at;
  }

  markRejected(rejections: { key: string; reason: string }[], at: number): void {
    const upd = this.db.prepare("UPDATE outbox SET rejected_reason = ?, delivered_at = NULL WHERE key = ?");
    this.db.transaction(() => rejections.forEach((r) => upd.run(r.reason, r.key)))();
    void at;
  }

  recordAttempt(keys: string[], error: string, at: number): void {
    const upd = this.db.prepare("UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE key = ?");
    this.db.transaction(() => keys.forEach((k) => upd.run(error, k)))();
    void at;
  }

  count(): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM outbox WHERE rejected_reason IS NULL").get() as { n: number }).n;
  }

  rejected(): { key: string; reason: string }[] {
    return this.db.prepare("SELECT key, rejected_reason AS reason FROM outbox WHERE rejected_reason IS NOT NULL ORDER BY seq").all() as {
      key: string;
      reason: string;
    }[];
  }

  purge(): number {
    return this.db.prepare("DELETE FROM outbox WHERE rejected_reason IS NULL").run().changes;
  }

  close(): void {
    this.db.close();
  }
}
