-- Same numbering and meaning as migrations/sqlite/002_batches_limits.sql.
CREATE TABLE batches (
  install_id TEXT NOT NULL,
  batch_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  response TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (install_id, batch_id, digest)
);
ALTER TABLE installs ADD COLUMN item_count INTEGER NOT NULL DEFAULT 0;
UPDATE installs SET item_count = (SELECT COUNT(*) FROM items WHERE items.install_id = installs.install_id);
CREATE UNIQUE INDEX installs_token_hash ON installs (token_hash);
CREATE TABLE rate_windows (
  install_id TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (install_id, window_start)
);
CREATE INDEX items_domain_order ON items (domain, created_at, received_at, install_id, idempotency_key);
CREATE INDEX items_kind_order ON items (kind, created_at, received_at, install_id, idempotency_key);
