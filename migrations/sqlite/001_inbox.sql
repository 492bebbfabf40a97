-- The durable inbox: one row per accepted delivery, written before any 2xx.
-- Raw bytes are kept exactly as received so that any row can be parsed again by a later version.
CREATE TABLE inbox (
  inbox_id     INTEGER PRIMARY KEY,
  received_at  TEXT    NOT NULL,                 -- UTC ISO 8601 with milliseconds
  raw          BLOB    NOT NULL,
  identity     TEXT    UNIQUE,                   -- docs/projection.md section 1; NULL when not an envelope
  kind         TEXT,                             -- the body's `event`, as sent
  verdict      TEXT    NOT NULL CHECK (verdict IN ('accepted', 'invalid_json', 'invalid_envelope')),
  secret_id    TEXT,                             -- fingerprint of the secret that matched; NULL when unsigned
  state        TEXT    NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'projected', 'unknown', 'dead')),
  reasons      TEXT,                             -- JSON array of {path, message} for unknown and dead rows
  attempts     INTEGER NOT NULL DEFAULT 0,
  processed_at TEXT
);

-- The dispatcher's work list and the operator's lists stay small however large the inbox grows.
CREATE INDEX inbox_pending ON inbox (inbox_id) WHERE state = 'pending';
CREATE INDEX inbox_set_aside ON inbox (state, inbox_id) WHERE state IN ('unknown', 'dead');
