-- The schema the service had before migrations were numbered: IF NOT EXISTS, so a data
-- folder made by an older build upgrades in place.
CREATE TABLE IF NOT EXISTS installs (
  install_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  rotated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
  install_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  domain TEXT,
  consent TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  batch_id TEXT NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (install_id, idempotency_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_domain ON items (domain, kind);
