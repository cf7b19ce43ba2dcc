import type { Database, Statement } from "better-sqlite3";
import type { FeedbackKind, MessageVersions } from "./feedback-items";

/** A feedback signal as recorded locally (unredacted; never leaves the machine as such). */
export interface FeedbackEvent {
  id: string;
  kind: FeedbackKind;
  messageId: string | null;
  conversationId: string | null;
  createdAt: number;
  payload: Record<string, unknown>;
  versions: MessageVersions;
}

interface EventRow {
  id: string;
  kind: FeedbackKind;
  message_id: string | null;
  conversation_id: string | null;
  created_at: number;
  payload_json: string;
  versions_json: string;
}

const toEvent = (r: EventRow): FeedbackEvent => ({
  id: r.id,
  kind: r.kind,
  messageId: r.message_id,
  conversationId: r.conversation_id,
  createdAt: r.created_at,
  payload: JSON.parse(r.payload_json) as Record<string, unknown>,
  versions: JSON.parse(r.versions_json) as MessageVersions,
});

/** The `feedback_events` table (migration 0004). */
export class FeedbackEventStore {
  private readonly insertStmt: Statement<[Record<string, unknown>]>;
  private readonly ratingStmt: Statement<[string], string>;
  private readonly listStmt: Statement<[string], EventRow>;

  constructor(db: Database) {
    this.insertStmt = db.prepare(`
      INSERT INTO feedback_events (id, kind, message_id, conversation_id, created_at, payload_json, versions_json)
      VALUES (@id, @kind, @messageId, @conversationId, @createdAt, @payload, @versions)`);
    this.ratingStmt = db
      .prepare(
        "SELECT json_extract(payload_json, '$.rating') FROM feedback_events WHERE message_id = ? AND kind = 'rating' ORDER BY created_at DESC, rowid DESC LIMIT 1",
      )
      .pluck() as Statement<[string], string>;
    this.listStmt = db.prepare(
      "SELECT * FROM feedback_events WHERE message_id = ? ORDER BY created_at, rowid",
    );
  }

  insert(event: FeedbackEvent): void {
    this.insertStmt.run({
      id: event.id,
      kind: event.kind,
      messageId: event.messageId,
      conversationId: event.conversationId,
      createdAt: event.createdAt,
      payload: JSON.stringify(event.payload),
      versions: JSON.stringify(event.versions),
    });
  }

  /** The latest rating of a message, or null (a later rating replaces an earlier one). */
  latestRating(messageId: string): "good" | "bad" | null {
    const r = this.ratingStmt.get(messageId);
    return r === "good" || r === "bad" ? r : null;
  }

  /** Every event about a message, oldest first. */
  forMessage(messageId: string): FeedbackEvent[] {
    return this.listStmt.all(messageId).map(toEvent);
  }
}
