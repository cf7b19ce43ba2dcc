import type { Database } from "better-sqlite3";

/**
 * Schema v12: per-conversation settings and named presets (issue 13).
 *
 * - `conversation_settings`: a conversation's own system prompt (NULL: the app's default) and
 *   sampling (JSON of SamplingSettings, validated with zod when read and written). A separate
 *   table, one row per conversation that has settings, so that conversations without any (all
 *   of them before v12) need no row, and deleting a conversation deletes its settings.
 * - `sampling_presets`: the same values under a unique name (case-insensitive: "Precise" and
 *   "precise" would be indistinguishable in the list).
 * - `turns.system_prompt`: the system prompt an answer was generated with, beside the sampling
 *   its turn record already keeps (`sampling_json`), so an old answer still shows what it was
 *   generated with after the conversation's settings change. NULL: the app's default prompt
 *   (and every turn recorded before v12).
 */
export function migrate0012(db: Database): void {
  db.exec(`
    CREATE TABLE conversation_settings (
      conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
      system_prompt TEXT,
      sampling_json TEXT NOT NULL DEFAULT '{}',
      updated_at INTEGER NOT NULL
    );

    CREATE TABLE sampling_presets (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL UNIQUE COLLATE NOCASE,
      system_prompt TEXT,
      sampling_json TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );

    ALTER TABLE turns ADD COLUMN system_prompt TEXT;
  `);
}
