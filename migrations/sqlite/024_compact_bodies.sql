-- prequal-hooks: foreign_keys off
-- A compact inbox: the same rows, ids and states, in fewer bytes. SQLite's table rebuild
-- (https://sqlite.org/lang_altertable.html#otheralter), with foreign keys off while
-- handler_failures' references are briefly to a table being replaced.
--
-- 1. The identity (docs/projection.md section 1, a SHA-256) is kept as its 32 bytes rather than 64
--    hex characters, in the row and in the two unique indexes led by it. The store reads it back as
--    hex: nothing above it, and nothing a user sees, changes.
-- 2. Raw bodies are deflated with a dictionary of the service's event shapes (src/store/bodies.ts),
--    the codec beside each: NULL for a row stored before (its bytes as received), 0 for a body kept
--    as received, 1 for deflate with dictionary 1. Intake writes the compact form from now on; the
--    rows copied here are rewritten after the migrations by a batched step that needs JavaScript
--    (src/store/sqlite/compact-bodies.ts), in inbox order up to the last row stored now, its
--    progress in `settings` (compact_bodies), removed once done: readers take both forms meanwhile.
-- 3. `campaign_id`: `data.campaign_id` of an accepted body, as text. The event lists show and
--    filter by it, and can no longer read it from the body with SQL. Set at intake, and by the
--    rewrite for older rows (whose body SQL still reads while their codec is NULL).
CREATE TABLE inbox_new (
  inbox_id     INTEGER PRIMARY KEY,
  account      TEXT    NOT NULL DEFAULT 'default',
  received_at  TEXT    NOT NULL,                 -- UTC ISO 8601 with milliseconds
  raw          BLOB    NOT NULL,                 -- as `codec` says (src/store/bodies.ts)
  codec        INTEGER,                          -- NULL (stored before: as received), 0 (as received), 1 (deflate, dictionary 1)
  identity     BLOB,                             -- SHA-256, 32 bytes (docs/projection.md section 1); NULL when not an envelope
  event_at     INTEGER,                          -- the instant of the event's timestamp (Unix ms)
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
  handlers_lease_until INTEGER,
  trace_context TEXT,
  campaign_id  TEXT
);
INSERT INTO inbox_new (inbox_id, account, received_at, raw, codec, identity, event_at, kind, verdict, secret_id, state, reasons, attempts,
                       processed_at, handlers_pending, raw_sha256, handler_key, handlers_owner, handlers_lease_until, trace_context)
  SELECT inbox_id, account, received_at, raw, NULL, unhex(identity), event_at, kind, verdict, secret_id, state, reasons, attempts,
         processed_at, handlers_pending, raw_sha256, handler_key, handlers_owner, handlers_lease_until, trace_context
  FROM inbox;
DROP TABLE inbox;
ALTER TABLE inbox_new RENAME TO inbox;
CREATE UNIQUE INDEX inbox_identity_undated ON inbox (account, identity) WHERE identity IS NOT NULL AND event_at IS NULL;
CREATE UNIQUE INDEX inbox_identity ON inbox (account, event_at, identity) WHERE identity IS NOT NULL AND event_at IS NOT NULL;
CREATE UNIQUE INDEX inbox_raw_sha256 ON inbox (account, raw_sha256) WHERE raw_sha256 IS NOT NULL;
CREATE INDEX inbox_pending ON inbox (account, inbox_id) WHERE state = 'pending';
CREATE INDEX inbox_handlers_pending ON inbox (account, inbox_id) WHERE handlers_pending = 1;
CREATE INDEX inbox_set_aside ON inbox (account, state, inbox_id) WHERE state IN ('unknown', 'dead');
CREATE INDEX inbox_by_key ON inbox (account, handler_key, inbox_id) WHERE handler_key IS NOT NULL;
CREATE INDEX inbox_reconciled ON inbox (account, inbox_id) WHERE kind LIKE 'reconcile.%';
CREATE INDEX inbox_by_received ON inbox (account, received_at);
INSERT INTO settings (key, value, updated_at)
  SELECT 'compact_bodies', json_object('after', 0, 'last', COALESCE(MAX(inbox_id), 0)), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM inbox;
CREATE TRIGGER inbox_counted_insert AFTER INSERT ON inbox BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (NEW.account, 'inbox', NEW.state, 1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER inbox_counted_delete AFTER DELETE ON inbox BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (OLD.account, 'inbox', OLD.state, -1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n - 1;
END;
CREATE TRIGGER inbox_counted_update AFTER UPDATE OF state, account ON inbox
  WHEN OLD.state IS NOT NEW.state OR OLD.account IS NOT NEW.account BEGIN
  INSERT INTO counters (account, name, key, n) VALUES (OLD.account, 'inbox', OLD.state, -1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n - 1;
  INSERT INTO counters (account, name, key, n) VALUES (NEW.account, 'inbox', NEW.state, 1)
    ON CONFLICT (account, name, key) DO UPDATE SET n = n + 1;
END;
