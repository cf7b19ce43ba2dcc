import type { Database } from "better-sqlite3";

/**
 * Schema v3: Mixture-of-LoRA.
 * - `adapters`: installed LoRA files (copied into <dataDir>/adapters) with their manifest and
 *   the user's switches (enabled, scale) and usage count.
 * - `conversations.adapters_json`: the conversation's AdapterSelection ("auto" by default).
 * - `messages.replaced_by`: a regenerated answer points at its replacement and leaves the
 *   transcript (kept for feedback and audit, never deleted).
 * - `turns`: the full record of each assistant turn (model + harness + adapters + router
 *   decision + sampling + timings + KV policy): model and harness evolve as one unit.
 * - `router_vectors`, `router_learned`: the router's embedding cache and learned overrides
 *   (the RouterStore of electron/core/router).
 */
export function migrate0003(db: Database): void {
  db.exec(`
    CREATE TABLE adapters (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      domain TEXT NOT NULL,
      version TEXT NOT NULL,
      description TEXT NOT NULL DEFAULT '',
      sha256 TEXT NOT NULL UNIQUE,
      size_bytes INTEGER NOT NULL,
      file_path TEXT NOT NULL,
      manifest_json TEXT NOT NULL,
      enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
      scale REAL NOT NULL CHECK (scale >= 0 AND scale <= 2),
      installed_at INTEGER NOT NULL,
      usage_count INTEGER NOT NULL DEFAULT 0
    );

    ALTER TABLE conversations ADD COLUMN adapters_json TEXT NOT NULL DEFAULT '"auto"';
    ALTER TABLE messages ADD COLUMN replaced_by TEXT;

    CREATE TABLE turns (
      message_id TEXT PRIMARY KEY NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
      model_sha256 TEXT,
      harness_version TEXT NOT NULL,
      adapters_json TEXT NOT NULL,
      router_json TEXT NOT NULL,
      sampling_json TEXT NOT NULL,
      timings_json TEXT,
      kv_policy TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );

    CREATE TABLE router_vectors (
      model_key TEXT NOT NULL,
      text_hash TEXT NOT NULL,
      vector BLOB NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (model_key, text_hash)
    );

    CREATE TABLE router_learned (
      id INTEGER PRIMARY KEY,
      text_hash TEXT NOT NULL UNIQUE,
      text TEXT NOT NULL,
      adapter_id TEXT NOT NULL,
      created_at REAL NOT NULL
    );
    CREATE INDEX router_learned_adapter ON router_learned(adapter_id, created_at);
  `);
}
