-- prequal-hooks: foreign_keys off
-- The identity's uniqueness moves from the column (`identity TEXT UNIQUE`, an index SQLite names
-- itself and never lets go) to a named index: a bulk load into an empty inbox (replay, see
-- src/store/sqlite/bulk.ts) drops it, appends every row, and builds it again by sorting, which
-- is what keeps replay's cost per event flat as the file grows. Same columns, same rows, same
-- inbox ids; SQLite's table rebuild (https://sqlite.org/lang_altertable.html#otheralter), with
-- foreign keys off while handler_failures' references are briefly to a table being replaced.
CREATE TABLE inbox_new (
  inbox_id     INTEGER PRIMARY KEY,
  received_at  TEXT    NOT NULL,                 -- UTC ISO 8601 with milliseconds
  raw          BLOB    NOT NULL,
  identity     TEXT,                             -- docs/projection.md section 1; NULL when not an envelope (unique: inbox_identity)
  kind         TEXT,                             -- the body's `event`, as sent
  verdict      TEXT    NOT NULL CHECK (verdict IN ('accepted', 'invalid_json', 'invalid_envelope')),
  secret_id    TEXT,                             -- fingerprint of the secret that matched; NULL when unsigned
  state        TEXT    NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'projected', 'unknown', 'dead')),
  reasons      TEXT,                             -- JSON array of {path, message} for unknown and dead rows
  attempts     INTEGER NOT NULL DEFAULT 0,
  processed_at TEXT,
  handlers_pending INTEGER NOT NULL DEFAULT 0,
  raw_sha256   TEXT,
  handler_key  TEXT,
  handlers_owner TEXT,
  handlers_lease_until INTEGER
);
INSERT INTO inbox_new (inbox_id, received_at, raw, identity, kind, verdict, secret_id, state, reasons, attempts, processed_at,
                       handlers_pending, raw_sha256, handler_key, handlers_owner, handlers_lease_until)
  SELECT inbox_id, received_at, raw, identity, kind, verdict, secret_id, state, reasons, attempts, processed_at,
         handlers_pending, raw_sha256, handler_key, handlers_owner, handlers_lease_until
  FROM inbox;
DROP TABLE inbox;
ALTER TABLE inbox_new RENAME TO inbox;
CREATE UNIQUE INDEX inbox_identity ON inbox (identity) WHERE identity IS NOT NULL;
CREATE UNIQUE INDEX inbox_raw_sha256 ON inbox (raw_sha256) WHERE raw_sha256 IS NOT NULL;
CREATE INDEX inbox_pending ON inbox (inbox_id) WHERE state = 'pending';
CREATE INDEX inbox_set_aside ON inbox (state, inbox_id) WHERE state IN ('unknown', 'dead');
CREATE INDEX inbox_handlers_pending ON inbox (inbox_id) WHERE handlers_pending = 1;
CREATE INDEX inbox_handlers_by_key ON inbox (handler_key, inbox_id) WHERE handlers_pending = 1 OR state = 'pending';
