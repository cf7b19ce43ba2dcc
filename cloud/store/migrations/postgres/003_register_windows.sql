-- Registrations per source address in fixed windows (POST /v1/installs is rate limited, and
-- every replica must count the same). Keyed window first, so old windows go with one range delete.
CREATE TABLE register_windows (
  window_start BIGINT NOT NULL,
  source TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (window_start, source)
);
