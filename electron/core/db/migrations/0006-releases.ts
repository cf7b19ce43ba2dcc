import type { Database } from "better-sqlite3";

/**
 * Schema v6: versioned adapters and releases.
 * - `adapter_versions`: every version of every adapter (staged, evaluating, live, rejected,
 *   retired) with its file, manifest, lineage and contract report. The `adapters` row keeps
 *   pointing at the live version (its columns are the live version's); at most one live
 *   version per adapter (partial unique index).
 * - `releases`: one row each time the live set, the base model or the harness changes.
 * - `turns.release_id`: the release that produced a turn, filled by a trigger with the newest
 *   release when the turn is inserted (inside the turn's own transaction), so the chat pipeline
 *   needs no change. Turns older than this migration keep NULL.
 * Existing installed adapters become their first, live version.
 */
export function migrate0006(db: Database): void {
  db.exec(`
    CREATE TABLE adapter_versions (
      adapter_id TEXT NOT NULL,
      version TEXT NOT NULL,
      sha256 TEXT NOT NULL,
      size_bytes INTEGER NOT NULL,
      file_path TEXT NOT NULL,
      manifest_json TEXT NOT NULL,
      lineage_json TEXT NOT NULL,
      source TEXT NOT NULL CHECK (source IN ('install', 'file', 'registry')),
      status TEXT NOT NULL CHECK (status IN ('staged', 'evaluating', 'live', 'rejected', 'retired')),
      status_reason TEXT,
      contract_report_json TEXT,
      installed_at INTEGER NOT NULL,
      promoted_at INTEGER,
      pruned_at INTEGER,
      PRIMARY KEY (adapter_id, version)
    );
    CREATE UNIQUE INDEX adapter_versions_one_live ON adapter_versions (adapter_id) WHERE status = 'live';

    CREATE TABLE releases (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      base_model_sha256 TEXT,
      harness_version TEXT NOT NULL,
      contract_version TEXT NOT NULL,
      adapters_json TEXT NOT NULL,
      reason TEXT NOT NULL CHECK (reason IN ('startup', 'install', 'remove', 'promote', 'rollback', 'model')),
      detail TEXT,
      created_at INTEGER NOT NULL
    );

    ALTER TABLE turns ADD COLUMN release_id INTEGER REFERENCES releases(id);
    CREATE TRIGGER turns_release_id AFTER INSERT ON turns WHEN NEW.release_id IS NULL
    BEGIN
      UPDATE turns SET release_id = (SELECT MAX(id) FROM releases) WHERE message_id = NEW.message_id;
    END;

    INSERT INTO adapter_versions (adapter_id, version, sha256, size_bytes, file_path, manifest_json,
      lineage_json, source, status, installed_at, promoted_at)
    SELECT id, version, sha256, size_bytes, file_path,
      json_patch(manifest_json, json_object('name', name, 'domain', domain, 'description', description, 'releaseNotes', '')),
      COALESCE(json_extract(manifest_json, '$.lineage'), '{"parent":null,"trainedFrom":"unknown"}'),
      'install', 'live', installed_at, installed_at
    FROM adapters;
  `);
}
