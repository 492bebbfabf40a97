-- Receiver settings kept with the data they protect: the secret `prequal-hooks serve` generates
-- when none is given, so that later starts reuse it.
CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
