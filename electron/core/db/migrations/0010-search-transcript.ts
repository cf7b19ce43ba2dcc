import type { Database } from "better-sqlite3";
import { FTS_TOKENIZER } from "./0005-memory";

/**
 * Schema v10: `messages_fts` indexes the transcript only, so that search can rank and cut
 * inside FTS5 (ORDER BY rank LIMIT n) before joining anything.
 *
 * Until v9 it indexed every message, and search had to join every match to `messages` to drop
 * the answers replaced by a regeneration (`replaced_by` set) before it could sort and cut: at a
 * million messages, a common word meant ~100k joins per keystroke.
 *
 * - `messages_fts_content`: the transcript (messages not replaced) as the index's external
 *   content, so that FTS5's own 'rebuild' (needed after a VACUUM, see 0005) and
 *   'integrity-check' see the same rows the triggers index.
 * - The triggers index a message while `replaced_by` is NULL and remove it when it is set. An
 *   external-content 'delete' must be given exactly what was indexed, or the index is corrupted:
 *   every 'delete' is guarded by the old row having been indexed.
 * - Prefix indexes for 1, 2 and 3 characters, in `messages_fts` and `conversations_fts` (whose
 *   triggers from 0005 stay: they name the table, which is made again): the last word of every search is a prefix (results
 *   while typing), and without them "ka*" merges the document lists of every word that starts
 *   with "ka" (thousands) on each keystroke. They make the index about 2.5 times larger (about a
 *   quarter of the database with the messages' text).
 * - Rebuilding the index is one pass over the messages (seconds at a million), once.
 */
export function migrate0010(db: Database): void {
  db.exec(`
    DROP TRIGGER messages_fts_insert;
    DROP TRIGGER messages_fts_delete;
    DROP TRIGGER messages_fts_update;
    DROP TABLE messages_fts;

    CREATE VIEW messages_fts_content AS
      SELECT rowid AS message_rowid, content FROM messages WHERE replaced_by IS NULL;
    CREATE VIRTUAL TABLE messages_fts USING fts5(
      content, content='messages_fts_content', content_rowid='message_rowid',
      tokenize='${FTS_TOKENIZER}', prefix='1 2 3'
    );

    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.replaced_by IS NULL BEGIN
      INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.replaced_by IS NULL BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
    END;
    -- Streaming rewrites content many times per answer: nothing to do when neither the text nor
    -- whether the message is in the transcript changed.
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, replaced_by ON messages
    WHEN old.content IS NOT new.content OR (old.replaced_by IS NULL) <> (new.replaced_by IS NULL)
    BEGIN
      INSERT INTO messages_fts(messages_fts, rowid, content)
        SELECT 'delete', old.rowid, old.content WHERE old.replaced_by IS NULL;
      INSERT INTO messages_fts(rowid, content)
        SELECT new.rowid, new.content WHERE new.replaced_by IS NULL;
    END;

    INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');

    -- The same prefix indexes for titles: same triggers as 0005 made, the table made again.
    DROP TABLE conversations_fts;
    CREATE VIRTUAL TABLE conversations_fts USING fts5(
      title, content='conversations', content_rowid='rowid',
      tokenize='${FTS_TOKENIZER}', prefix='1 2 3'
    );
    INSERT INTO conversations_fts(conversations_fts) VALUES ('rebuild');
  `);
}
