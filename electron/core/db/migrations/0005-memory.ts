import type { Database } from "better-sqlite3";

/** The tokenizer of every full-text index: Unicode-aware, "café" matches "cafe". */
export const FTS_TOKENIZER = "unicode61 remove_diacritics 2";

/**
 * An FTS5 index that mirrors one text column of `table` (external content: the text is stored
 * once, in `table`), kept in sync by triggers, and filled from the rows that exist already.
 *
 * The index points at rows by rowid. messages, conversations and memories have TEXT primary
 * keys, so their rowid is implicit: SQLite keeps it across updates and backups, but VACUUM may
 * renumber it. Whoever adds a VACUUM must rebuild these indexes right after it
 * (`INSERT INTO <index>(<index>) VALUES ('rebuild')`).
 */
function mirroredIndex(db: Database, index: string, table: string, column: string): void {
  db.exec(`
    CREATE VIRTUAL TABLE ${index} USING fts5(
      ${column}, content='${table}', content_rowid='rowid', tokenize='${FTS_TOKENIZER}'
    );
    CREATE TRIGGER ${index}_insert AFTER INSERT ON ${table} BEGIN
      INSERT INTO ${index}(rowid, ${column}) VALUES (new.rowid, new.${column});
    END;
    CREATE TRIGGER ${index}_delete AFTER DELETE ON ${table} BEGIN
      INSERT INTO ${index}(${index}, rowid, ${column}) VALUES ('delete', old.rowid, old.${column});
    END;
    CREATE TRIGGER ${index}_update AFTER UPDATE OF ${column} ON ${table} BEGIN
      INSERT INTO ${index}(${index}, rowid, ${column}) VALUES ('delete', old.rowid, old.${column});
      INSERT INTO ${index}(rowid, ${column}) VALUES (new.rowid, new.${column});
    END;
    INSERT INTO ${index}(${index}) VALUES ('rebuild');
  `);
}

/**
 * Schema v5: stateful memory.
 * - `messages_fts`, `conversations_fts`: full-text search over message contents and titles.
 * - `memories`: facts about the user. source "user" (typed, or "remember that …") or "model"
 *   (proposed after an answer); status "proposed" ones are never used until the user accepts.
 *   conversation_id/message_id say where a memory came from and become NULL when that is
 *   deleted (the memory stays unless the user asks to delete it with the conversation).
 * - `memories_fts`: full-text candidates for retrieval.
 * - `memory_vectors`: cached embeddings per model, valid while text_hash matches the text.
 * - `message_memories`: which memories an answer was given (Message.memoriesUsed).
 * - `messages.context_json`: how the history was fitted into the context (Message.context).
 */
export function migrate0005(db: Database): void {
  mirroredIndex(db, "messages_fts", "messages", "content");
  mirroredIndex(db, "conversations_fts", "conversations", "title");
  db.exec(`
    ALTER TABLE messages ADD COLUMN context_json TEXT;

    CREATE TABLE memories (
      id TEXT PRIMARY KEY NOT NULL,
      text TEXT NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
      source TEXT NOT NULL CHECK (source IN ('user', 'model')),
      status TEXT NOT NULL CHECK (status IN ('active', 'proposed')),
      conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
      message_id TEXT REFERENCES messages(id) ON DELETE SET NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      last_used_at INTEGER
    );
    CREATE INDEX memories_status_updated ON memories(status, updated_at);
    -- Foreign-key children need an index, or every parent delete scans the whole table.
    CREATE INDEX memories_conversation ON memories(conversation_id);
    CREATE INDEX memories_message ON memories(message_id);

    CREATE TABLE memory_vectors (
      memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
      model_key TEXT NOT NULL,
      text_hash TEXT NOT NULL,
      vector BLOB NOT NULL,
      PRIMARY KEY (memory_id, model_key)
    ) WITHOUT ROWID;

    CREATE TABLE message_memories (
      message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
      PRIMARY KEY (message_id, memory_id)
    ) WITHOUT ROWID;
    CREATE INDEX message_memories_memory ON message_memories(memory_id);
  `);
  mirroredIndex(db, "memories_fts", "memories", "text");
}
