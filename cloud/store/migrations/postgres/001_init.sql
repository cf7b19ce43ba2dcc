CREATE TABLE installs (
  install_id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  rotated_at BIGINT NOT NULL
);
CREATE TABLE items (
  install_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  domain TEXT,
  consent TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  batch_id TEXT NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (install_id, idempotency_key)
);
CREATE INDEX items_domain ON items (domain, kind);
