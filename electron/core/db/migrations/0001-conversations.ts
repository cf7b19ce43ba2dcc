import type { Database } from "better-sqlite3";

/**
 * Schema v1: conversations and their messages. `seq` orders messages inside a conversation
 * (timestamps can tie or go backwards when the clock changes); `stats_json` holds the
 * GenerationStats of an assistant answer.
 */
export function migrate0001(db: Database): void {
  db.exec(`
    CREATE TABLE conversations (
      id TEXT PRIMARY KEY NOT NULL,
      title TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE INDEX conversations_updated_at ON conversations(updated_at);

    CREATE TABLE messages (
      id TEXT PRIMARY KEY NOT NULL,
      conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
      role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
      content TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('complete', 'streaming', 'stopped', 'error', 'interrupted')),
      error TEXT,
      created_at INTEGER NOT NULL,
      stats_json TEXT,
      seq INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX messages_conversation_seq ON messages(conversation_id, seq);
  `);
}
