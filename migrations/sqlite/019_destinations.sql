-- HTTP destinations (docs/destinations.md): per account, the URLs its changes (018_changes.sql)
-- are POSTed to. Nothing here is written by the projection: a delivery loop reads the changes
-- after a destination's cursor, queues those that pass its filter, and settles each by seq, so a
-- failing destination never slows intake or projection. Times in ms since the epoch are the
-- loop's clock (next_at, lease_until); the others are UTC ISO 8601 with milliseconds.
CREATE TABLE destinations (
  account      TEXT NOT NULL,
  destination  TEXT NOT NULL,           -- dst_ and random base32
  url          TEXT NOT NULL,           -- without user info: the credentials are sealed with the secrets
  sealed       TEXT NOT NULL,           -- AES-256-GCM under the accounts key: the signing secrets, the URL's user info
  key_id       TEXT NOT NULL,
  filter       TEXT NOT NULL,           -- JSON: {"entity"?, "campaign"?, "min_score"?}
  rate         REAL,                    -- requests per second at most; NULL: no limit
  schedule     TEXT NOT NULL,           -- JSON array: the delay in ms before each attempt
  state        TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
  state_reason TEXT,
  cursor       INTEGER NOT NULL,        -- the last seq looked at: queued, or left out by the filter
  failures     INTEGER NOT NULL DEFAULT 0,  -- consecutive failed attempts (the breaker)
  lease_owner  TEXT,                    -- the process delivering it, until lease_until
  lease_until  INTEGER,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (account, destination)
) WITHOUT ROWID;

-- A change queued for a destination, until it is delivered (the row goes) or set aside ('dead').
-- It holds no copy of the change: the body is read from `changes` when it is sent, so an erasure
-- reaches what is queued.
CREATE TABLE destination_deliveries (
  account     TEXT NOT NULL,
  destination TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  entity      TEXT NOT NULL,
  entity_id   TEXT NOT NULL,
  state       TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'dead')),
  attempts    INTEGER NOT NULL DEFAULT 0,
  next_at     INTEGER NOT NULL,
  last_status INTEGER,
  last_error  TEXT,
  failed_at   TEXT,
  PRIMARY KEY (account, destination, seq),
  FOREIGN KEY (account, destination) REFERENCES destinations (account, destination) ON DELETE CASCADE
) WITHOUT ROWID;
-- Order per entity: a queued change waits for the earlier queued changes of its entity.
CREATE INDEX destination_deliveries_by_entity ON destination_deliveries (account, destination, entity, entity_id, seq)
  WHERE state = 'queued';

-- Bumped by every change the CLI makes to a destination: a running loop polls it to see one cheaply.
CREATE TABLE destinations_version (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  version  INTEGER NOT NULL
);
INSERT INTO destinations_version (only_row, version) VALUES (1, 0);
