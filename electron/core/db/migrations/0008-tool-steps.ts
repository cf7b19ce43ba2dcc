import type { Database } from "better-sqlite3";

/**
 * Schema v8: the Agent's tool calls (issue 12).
 * - `tool_steps`: one row per step of an answer's trajectory (electron/api/tools.ts ToolStep):
 *   the call, its arguments, the user's decision, the result or error and how long it took.
 *   Deleted with its answer, and so with its conversation (messages cascade from it).
 * - `tool_grants`: "always allow this tool in this conversation", so that the grant survives a
 *   restart. Deleted with the conversation.
 */
export function migrate0008(db: Database): void {
  db.exec(`
    CREATE TABLE tool_steps (
      id TEXT PRIMARY KEY NOT NULL,
      message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      idx INTEGER NOT NULL CHECK (idx >= 0),
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      arguments_json TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'error', 'denied', 'stopped', 'invalid')),
      decision TEXT CHECK (decision IS NULL OR decision IN ('once', 'always', 'remembered', 'deny')),
      result TEXT,
      truncated INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1)),
      error TEXT,
      duration_ms REAL CHECK (duration_ms IS NULL OR duration_ms >= 0),
      created_at INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX tool_steps_message_idx ON tool_steps(message_id, idx);

    CREATE TABLE tool_grants (
      conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
      server TEXT NOT NULL,
      tool TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (conversation_id, server, tool)
    );
  `);
}
