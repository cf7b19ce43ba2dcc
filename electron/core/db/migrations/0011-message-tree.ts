import type { Database } from "better-sqlite3";
import { FTS_TOKENIZER } from "./0005-memory";

/**
 * Schema v11: messages form a tree, so that editing a question or answering it again keeps the
 * earlier versions as branches the user can flip between.
 *
 * - `parent_id`: the message this one follows (null for a conversation's first message).
 *   Versions of a message are its siblings: the same conversation and parent.
 * - `chosen`: 1 on the sibling shown among its versions (at most one per parent), kept while
 *   the branch above it is hidden, so flipping back to a branch shows it as it was left.
 * - `shown`: 1 on the shown branch (chosen, and every ancestor chosen). It is derived from
 *   `chosen` but stored, because the transcript read, search's index and its triggers must
 *   stay one-row tests: a recursive walk per row would be paid on every keystroke of search.
 *   Only `MessageStore` writes it (after any change of `chosen`).
 *
 * Existing rows: `replaced_by` (a regenerated answer, v3) was the only way a message left the
 * transcript. Each message's parent becomes the latest transcript message before it (by seq):
 * the transcript becomes a chain, and a replaced answer hangs off its question beside its
 * replacement, as an earlier version. `chosen` and `shown` start as `replaced_by IS NULL`, so
 * the transcript and the search index hold exactly the rows they held; the index's content view
 * and triggers now test `shown` instead of `replaced_by`, which new code no longer writes.
 * The view keeps its name, which FTS5 reserves while `messages_fts` exists (a shadow-table
 * name, refused in SQLite's defensive mode), so the index is made again and rebuilt from the
 * view: the same rows as before, one pass over the messages (seconds at a million), once.
 */
export function migrate0011(db: Database): void {
  db.exec(`
    ALTER TABLE messages ADD COLUMN parent_id TEXT REFERENCES messages(id) ON DELETE CASCADE;
    ALTER TABLE messages ADD COLUMN chosen INTEGER NOT NULL DEFAULT 1 CHECK (chosen IN (0, 1));
    ALTER TABLE messages ADD COLUMN shown INTEGER NOT NULL DEFAULT 1 CHECK (shown IN (0, 1));

    UPDATE messages SET
      chosen = (replaced_by IS NULL),
      shown = (replaced_by IS NULL),
      parent_id = (
        SELECT p.id FROM messages p
        WHERE p.conversation_id = messages.conversation_id AND p.replaced_by IS NULL
          AND p.seq < messages.seq
        ORDER BY p.seq DESC LIMIT 1
      );

    CREATE INDEX messages_parent ON messages(parent_id);

    DROP TRIGGER messages_fts_insert;
    DROP TRIGGER messages_fts_delete;
    DROP TRIGGER messages_fts_update;
    DROP TABLE messages_fts;
    DROP VIEW messages_fts_content;

    CREATE VIEW messages_fts_content AS
      SELECT rowid AS message_rowid, content FROM messages WHERE shown = 1;
    CREATE VIRTUAL TABLE messages_fts USING fts5(
      content, content='messages_fts_content', content_rowid='message_rowid',
      tokenize='${FTS_TOKENIZER}', prefix='1 2 3'
    );

    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.shown = 1 BEGIN
      INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.shown = 1 BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    END;
    -- As in 0010: an external-content 'delete' must be given exactly what was indexed.
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, shown ON messages
    WHEN old.content IS NOT new.content OR old.shown <> new.shown
    BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, content)
        SELECT 'delete', old.rowid, old.content WHERE old.shown = 1;
      INSERT INTO messages_fts(rowid, content)
        SELECT new.rowid, new.content WHERE new.shown = 1;
    END;

    INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
  `);
}
