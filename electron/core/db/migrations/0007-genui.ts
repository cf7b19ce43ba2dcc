import type { Database } from "better-sqlite3";

/**
 * Schema v7: generated UI (GenUI).
 * - `messages.format`: 'ui' for answers made of components (NULL = text, as before).
 * - `messages.ui_json`: a UI answer's validated document (Message.ui).
 * - `messages.interaction_json`: on a user turn made by using a component (Message.interaction).
 * - `turns.genui_catalog_version`: the catalog version a UI turn was generated under.
 * - `genui_events`: every interaction with a component (submits, clicks, choices, sorts,
 *   abandoned forms), with the user turn it became, if any. Deleted with its answer.
 */
export function migrate0007(db: Database): void {
  db.exec(`
    ALTER TABLE messages ADD COLUMN format TEXT CHECK (format IS NULL OR format IN ('text', 'ui'));
    ALTER TABLE messages ADD COLUMN ui_json TEXT;
    ALTER TABLE messages ADD COLUMN interaction_json TEXT;
    ALTER TABLE turns ADD COLUMN genui_catalog_version INTEGER;

    CREATE TABLE genui_events (
      id TEXT PRIMARY KEY NOT NULL,
      message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      component_id TEXT NOT NULL,
      action TEXT NOT NULL,
      values_json TEXT NOT NULL,
      outcome TEXT NOT NULL CHECK (outcome IN ('completed', 'changed', 'abandoned')),
      user_message_id TEXT REFERENCES messages(id) ON DELETE SET NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX genui_events_component ON genui_events(message_id, component_id, created_at);
    CREATE INDEX genui_events_user_message ON genui_events(user_message_id);
  `);
}
