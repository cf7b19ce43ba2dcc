-- Answered batches (a retry gets the first answer), per-install item counts (the storage cap
-- is checked in the ingest transaction), fixed rate windows, and keyset indexes for export.
CREATE TABLE batches (
  install_id TEXT NOT NULL,
  batch_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  response TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (install_id, batch_id, digest)
) WITHOUT ROWID;
ALTER TABLE installs ADD COLUMN item_count INTEGER NOT NULL DEFAULT 0;
UPDATE installs SET item_count = (SELECT COUNT(*) FROM items WHERE items.install_id = installs.install_id);
CREATE UNIQUE INDEX installs_token_hash ON installs (token_hash);
CREATE TABLE rate_windows (
  install_id TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (install_id, window_start)
) WITHOUT ROWID;
CREATE INDEX items_domain_order ON items (domain, created_at, received_at, install_id, idempotency_key);
CREATE INDEX items_kind_order ON items (kind, created_at, received_at, install_id, idempotency_key);
