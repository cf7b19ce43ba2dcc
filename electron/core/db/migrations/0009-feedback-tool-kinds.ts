import type { Database } from "better-sqlite3";

/**
 * Schema v9: two feedback kinds for the Agent's tool calls (issue 12): "trajectory" (an answer
 * that called tools is done) and "follow_up" (the user's next message after it, and whether it
 * corrects it). SQLite cannot change a CHECK constraint in place, so `feedback_events` is
 * rebuilt, and with it the two tables that reference it. Renaming the old table first makes its
 * children follow the rename, so dropping it cascades into nothing: every queued and rejected
 * item survives, still tied to its event.
 */
export function migrate0009(db: Database): void {
  db.exec(`
    ALTER TABLE feedback_events RENAME TO feedback_events_v8;
    DROP INDEX feedback_events_message;
    DROP INDEX feedback_events_conversation;
    CREATE TABLE feedback_events (
      id TEXT PRIMARY KEY NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('rating', 'correction', 'regeneration', 'genui', 'router_override', 'copy', 'trajectory', 'follow_up')),
      message_id TEXT REFERENCES messages(id) ON DELETE CASCADE,
      conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
      created_at INTEGER NOT NULL,
      payload_json TEXT NOT NULL,
      versions_json TEXT NOT NULL
    );
    INSERT INTO feedback_events SELECT id, kind, message_id, conversation_id, created_at, payload_json, versions_json FROM feedback_events_v8;
    CREATE INDEX feedback_events_message ON feedback_events(message_id, kind, created_at);
    CREATE INDEX feedback_events_conversation ON feedback_events(conversation_id);

    ALTER TABLE feedback_outbox RENAME TO feedback_outbox_v8;
    DROP INDEX feedback_outbox_order;
    DROP INDEX feedback_outbox_event;
    CREATE TABLE feedback_outbox (
      key TEXT PRIMARY KEY NOT NULL,
      event_id TEXT NOT NULL REFERENCES feedback_events(id) ON DELETE CASCADE,
      item_json TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      last_error TEXT,
      next_attempt_at INTEGER
    );
    INSERT INTO feedback_outbox SELECT key, event_id, item_json, created_at, attempts, last_error, next_attempt_at FROM feedback_outbox_v8;
    CREATE INDEX feedback_outbox_order ON feedback_outbox(created_at);
    CREATE INDEX feedback_outbox_event ON feedback_outbox(event_id);
    DROP TABLE feedback_outbox_v8;

    ALTER TABLE feedback_rejected RENAME TO feedback_rejected_v8;
    DROP INDEX feedback_rejected_event;
    CREATE TABLE feedback_rejected (
      key TEXT PRIMARY KEY NOT NULL,
      event_id TEXT REFERENCES feedback_events(id) ON DELETE CASCADE,
      item_json TEXT NOT NULL,
      reason TEXT NOT NULL,
      rejected_at INTEGER NOT NULL
    );
    INSERT INTO feedback_rejected SELECT key, event_id, item_json, reason, rejected_at FROM feedback_rejected_v8;
    CREATE INDEX feedback_rejected_event ON feedback_rejected(event_id);
    DROP TABLE feedback_rejected_v8;

    DROP TABLE feedback_events_v8;
  `);
}
