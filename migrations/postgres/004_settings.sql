-- Receiver settings kept with the data they protect: the secret `prequal-hooks serve` generates
-- when none is given, so that every replica (and later starts) use the same one.
CREATE TABLE settings (
  key        text PRIMARY KEY,
  value      text NOT NULL,
  updated_at timestamptz NOT NULL
);
