/**
 * The app's SqliteOutbox on its own SQLite file, plus what the sync's tests and benchmark need
 * to fill it: `enqueue` writes each item with a feedback event, in one transaction, the way
 * FeedbackService does. Several instances may open the same file: that is how the tests play
 * "the app was killed and started again".
 */
import type { Database } from "better-sqlite3";
import { randomUUID } from "node:crypto";
import type { FeedbackItem } from "../../common/feedback-protocol";
import { SqliteOutbox } from "../../electron/core/feedback/sqlite-outbox";
import { openFeedbackDatabase } from "../feedback/feedback-db";

export class QueuedOutbox extends SqliteOutbox {
  private readonly insertEvent;

  private constructor(readonly conn: Database) {
    super(conn);
    this.insertEvent = conn.prepare(
      "INSERT INTO feedback_events (id, kind, created_at, payload_json, versions_json) VALUES (?, ?, ?, '{}', ?)",
    );
  }

  static open(path: string): QueuedOutbox {
    return new QueuedOutbox(openFeedbackDatabase(path));
  }

  /** Queues items, each with its event, in one transaction. */
  enqueueItems(items: FeedbackItem[]): void {
    this.conn.transaction(() => {
      for (const item of items) {
        const eventId = randomUUID();
        this.insertEvent.run(eventId, item.kind, item.createdAt, JSON.stringify(item.versions));
        this.enqueue(eventId, item);
      }
    })();
  }

  /** Refused items as {key, reason}, oldest first. */
  refused(): { key: string; reason: string }[] {
    return this.rejected(10_000)
      .reverse()
      .map((r) => ({ key: r.key, reason: r.reason }));
  }

  close(): void {
    if (this.conn.open) this.conn.close();
  }
}
