import type { Database, Statement } from "better-sqlite3";
import { type FeedbackItem, LIMITS } from "../../../common/feedback-protocol";
import { withoutText } from "./feedback-items";
import type { Outbox, OutboxEntry } from "./outbox-types";

interface OutboxRow {
  key: string;
  item_json: string;
  attempts: number;
  created_at: number;
}

export interface RejectedEntry {
  key: string;
  item: FeedbackItem;
  reason: string;
  rejectedAt: number;
}

/** Room for the batch envelope ({"protocol":1,"installId":…,"batchId":…,"items":…}). */
export const BATCH_ENVELOPE_BYTES = 1024;

/**
 * The next batch to upload: the one place that decides the caps, shared by the sync client
 * and the privacy preview, so "what would be sent" is exactly what is sent.
 */
export function nextBatch(outbox: Outbox, maxItems: number = LIMITS.maxItemsPerBatch): OutboxEntry[] {
  return outbox.peekBatch(
    Math.min(maxItems, LIMITS.maxItemsPerBatch),
    LIMITS.maxBatchBytes - BATCH_ENVELOPE_BYTES,
  );
}

/** Wait before retrying after `attempts` transient failures: 30 s doubling, at most 6 h. */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 6 * 3600_000);
}

/**
 * The feedback outbox in SQLite (migration 0004). Items are written by FeedbackService in the
 * transaction of their event (`enqueue`); the sync client drains them through the Outbox interface.
 */
export class SqliteOutbox implements Outbox {
  private readonly insertStmt: Statement<[string, string, string, number]>;
  private readonly orderedStmt: Statement<[], OutboxRow>;
  private readonly deleteStmt: Statement<[string]>;
  private readonly rejectStmt: Statement<[{ key: string; at: number; reason: string }]>;
  private readonly attemptStmt: Statement<[{ key: string; next: number; error: string }]>;
  private readonly attemptsStmt: Statement<[string], number>;
  private readonly countStmt: Statement<[], number>;
  private readonly purgeStmt: Statement<[]>;
  private readonly rejectedStmt: Statement<
    [number],
    { key: string; item_json: string; reason: string; rejected_at: number }
  >;
  private readonly nextAttemptStmt: Statement<[], number | null>;
  private readonly textItemsStmt: Statement<[], { key: string; item_json: string }>;
  private readonly rewriteStmt: Statement<[string, string]>;

  constructor(
    private readonly db: Database,
    private readonly delayMs: (attempts: number) => number = retryDelayMs,
  ) {
    this.insertStmt = db.prepare(
      "INSERT INTO feedback_outbox (key, event_id, item_json, created_at) VALUES (?, ?, ?, ?)",
    );
    // rowid breaks ties between items of the same millisecond: insertion order.
    this.orderedStmt = db.prepare(
      "SELECT key, item_json, attempts, created_at FROM feedback_outbox ORDER BY created_at, rowid",
    );
    this.deleteStmt = db.prepare("DELETE FROM feedback_outbox WHERE key = ?");
    this.rejectStmt = db.prepare(`
      INSERT OR REPLACE INTO feedback_rejected (key, event_id, item_json, reason, rejected_at)
      SELECT key, event_id, item_json, @reason, @at FROM feedback_outbox WHERE key = @key`);
    this.attemptStmt = db.prepare(
      "UPDATE feedback_outbox SET attempts = attempts + 1, last_error = @error, next_attempt_at = @next WHERE key = @key",
    );
    this.attemptsStmt = db.prepare("SELECT attempts FROM feedback_outbox WHERE key = ?").pluck() as Statement<
      [string],
      number
    >;
    this.countStmt = db.prepare("SELECT COUNT(*) FROM feedback_outbox").pluck() as Statement<[], number>;
    this.purgeStmt = db.prepare("DELETE FROM feedback_outbox");
    this.rejectedStmt = db.prepare(
      "SELECT key, item_json, reason, rejected_at FROM feedback_rejected ORDER BY rejected_at DESC, rowid DESC LIMIT ?",
    );
    this.nextAttemptStmt = db
      .prepare("SELECT next_attempt_at FROM feedback_outbox ORDER BY created_at, rowid LIMIT 1")
      .pluck() as Statement<[], number | null>;
    this.textItemsStmt = db.prepare(
      "SELECT key, item_json FROM feedback_outbox WHERE json_extract(item_json, '$.consent') = 'ratings_and_text'",
    );
    this.rewriteStmt = db.prepare("UPDATE feedback_outbox SET item_json = ? WHERE key = ?");
  }

  /** Queue an item; call inside the transaction that records its event. */
  enqueue(eventId: string, item: FeedbackItem): void {
    this.insertStmt.run(item.idempotencyKey, eventId, JSON.stringify(item), item.createdAt);
  }

  /**
   * Oldest first while the items' JSON array stays within maxBytes (UTF-8). An item larger than
   * maxBytes on its own cannot happen with items from buildItem (MAX_ITEM_BYTES); should one be
   * at the head anyway it is returned alone, so the server's refusal unblocks the queue.
   */
  peekBatch(maxItems: number, maxBytes: number): OutboxEntry[] {
    const batch: OutboxEntry[] = [];
    if (!(maxItems >= 1)) return batch;
    let size = 2; // "[" and "]"
    for (const row of this.orderedStmt.iterate()) {
      const itemBytes = Buffer.byteLength(row.item_json) + (batch.length > 0 ? 1 : 0);
      if (batch.length > 0 && size + itemBytes > maxBytes) break;
      batch.push({
        key: row.key,
        item: JSON.parse(row.item_json) as FeedbackItem,
        attempts: row.attempts,
        createdAt: row.created_at,
      });
      size += itemBytes;
      if (batch.length >= maxItems || size > maxBytes) break;
    }
    return batch;
  }

  markDelivered(keys: string[], _at: number): void {
    this.db.transaction(() => {
      for (const key of keys) this.deleteStmt.run(key);
    })();
  }

  markRejected(rejections: { key: string; reason: string }[], at: number): void {
    this.db.transaction(() => {
      for (const { key, reason } of rejections) {
        this.rejectStmt.run({ key, at, reason: reason.slice(0, 2000) });
        this.deleteStmt.run(key);
      }
    })();
  }

  /** Count the attempt, keep the error and schedule the next one (see `nextAttemptAt`). */
  recordAttempt(keys: string[], error: string, at: number): void {
    this.db.transaction(() => {
      for (const key of keys) {
        const attempts = this.attemptsStmt.get(key);
        if (attempts === undefined) continue; // delivered or purged meanwhile
        this.attemptStmt.run({ key, next: at + this.delayMs(attempts + 1), error: error.slice(0, 2000) });
      }
    })();
  }

  count(): number {
    return this.countStmt.get() ?? 0;
  }

  purge(): number {
    return this.purgeStmt.run().changes;
  }

  /** When the head of the queue (every batch starts there) may be retried; null: now (or empty). */
  nextAttemptAt(): number | null {
    return this.nextAttemptStmt.get() ?? null;
  }

  /** Items the server refused for good, newest first, for the privacy screen. */
  rejected(limit = 100): RejectedEntry[] {
    return this.rejectedStmt.all(limit).map((r) => ({
      key: r.key,
      item: JSON.parse(r.item_json) as FeedbackItem,
      reason: r.reason,
      rejectedAt: r.rejected_at,
    }));
  }

  /** Consent lowered to "ratings": take the text out of every queued item; returns how many changed. */
  removeText(): number {
    let changed = 0;
    for (const row of this.textItemsStmt.all()) {
      this.rewriteStmt.run(JSON.stringify(withoutText(JSON.parse(row.item_json) as FeedbackItem)), row.key);
      changed++;
    }
    return changed;
  }
}
