-- prequal-hooks: foreign_keys off
-- A smaller inbox row, by the table rebuild of 024_compact_bodies.sql (the same rows and ids):
--
-- 1. The handler key (`candidate:<id>`, `campaign:<id>` or `credits`) is kept as bytes, a tag then
--    the id (src/store/handler-keys.ts): 17 bytes for a candidate's UUID against 46, in the row and
--    in inbox_by_key, the index that finds a person's events and orders their handlers.
--      00 credits; 01 + 16 bytes: a candidate whose id is a UUID in lowercase hex; 02 + UTF-8: any
--      other candidate id; 03 + UTF-8: a campaign; 04 + UTF-8: any other key, whole.
-- 2. `received_at` and `processed_at` are the instants' Unix ms (6 bytes against 24), as
--    `event_at` and `handlers_lease_until` are. The store gives them back as ISO 8601 text, as
--    before; a value that was not an instant is kept as it was.
CREATE TABLE inbox_new (
  inbox_id     INTEGER PRIMARY KEY,
  account      TEXT    NOT NULL DEFAULT 'default',
  received_at  INTEGER NOT NULL,                 -- Unix ms
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
  processed_at INTEGER,                          -- Unix ms
  handlers_pending INTEGER NOT NULL DEFAULT 0,
  raw_sha256   TEXT,
  handler_key  BLOB,                             -- src/store/handler-keys.ts
  handlers_owner TEXT,
  handlers_lease_until INTEGER,
  trace_context TEXT,
  campaign_id  TEXT
);
INSERT INTO inbox_new (inbox_id, account, received_at, raw, codec, identity, event_at, kind, verdict, secret_id, state, reasons, attempts,
                       processed_at, handlers_pending, raw_sha256, handler_key, handlers_owner, handlers_lease_until, trace_context, campaign_id)
  SELECT inbox_id, account,
         COALESCE(CAST(round(unixepoch(received_at, 'subsec') * 1000) AS INTEGER), received_at),
         raw, codec, identity, event_at, kind, verdict, secret_id, state, reasons, attempts,
         CASE WHEN processed_at IS NULL THEN NULL
              ELSE COALESCE(CAST(round(unixepoch(processed_at, 'subsec') * 1000) AS INTEGER), processed_at) END,
         handlers_pending, raw_sha256,
         CASE WHEN handler_key IS NULL OR typeof(handler_key) <> 'text' THEN handler_key
              WHEN handler_key = 'credits' THEN x'00'
              WHEN handler_key GLOB 'candidate:[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'
                THEN unhex('01' || replace(substr(handler_key, 11), '-', ''))
              WHEN handler_key GLOB 'candidate:*' THEN unhex('02' || hex(substr(handler_key, 11)))
              WHEN handler_key GLOB 'campaign:*' THEN unhex('03' || hex(substr(handler_key, 10)))
              ELSE unhex('04' || hex(handler_key)) END,
         handlers_owner, handlers_lease_until, trace_context, campaign_id
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
