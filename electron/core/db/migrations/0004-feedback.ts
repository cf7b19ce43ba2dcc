import type { Database } from "better-sqlite3";

/**
 * Schema v4: opt-in feedback.
 * - `feedback_events`: every signal the user gave (rating, correction, regeneration, copy,
 *   router override, GenUI interaction), local and unredacted, with the versions it is about.
 *   Recorded whatever the consent: it stays on this machine.
 * - `feedback_outbox`: the redacted wire items (common/feedback-protocol.ts FeedbackItem) waiting for
 *   upload, keyed by their idempotency key; written in the event's transaction, only with consent.
 * - `feedback_rejected`: items the server refused for good, kept visible with the reason.
 * Deleting a conversation (or a message) deletes its events, and through them their queued and
 * rejected items: nothing of a deleted conversation may still leave the machine.
 * Privacy settings live in the `settings` table (key "privacy").
 */
export function migrate0004(db: Database): void {
  db.exec(`
    CREATE TABLE feedback_events (
      id TEXT PRIMARY KEY NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('rating', 'correction', 'regeneration', 'genui', 'router_override', 'copy')),
      message_id TEXT REFERENCES messages(id) ON DELETE CASCADE,
      conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
      created_at INTEGER NOT NULL,
      payload_json TEXT NOT NULL,
      versions_json TEXT NOT NULL
    );
    CREATE INDEX feedback_events_message ON feedback_events(message_id, kind, created_at);
    CREATE INDEX feedback_events_conversation ON feedback_events(conversation_id);

    CREATE TABLE feedback_outbox (
      key TEXT PRIMARY KEY NOT NULL,
      event_id TEXT NOT NULL REFERENCES feedback_events(id) ON DELETE CASCADE,
      item_json TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT,
      next_attempt_at INTEGER
    );
    CREATE INDEX feedback_outbox_order ON feedback_outbox(created_at);
    CREATE INDEX feedback_outbox_event ON feedback_outbox(event_id);

    CREATE TABLE feedback_rejected (
      key TEXT PRIMARY KEY NOT NULL,
      event_id TEXT REFERENCES feedback_events(id) ON DELETE CASCADE,
      item_json TEXT NOT NULL,
      reason TEXT NOT NULL,
      rejected_at INTEGER NOT NULL
    );
    CREATE INDEX feedback_rejected_event ON feedback_rejected(event_id);
  `);
}
