-- HTTP destinations (docs/destinations.md): per account, the URLs its changes (018_changes.sql)
-- are POSTed to. Nothing here is written by the projection: a delivery loop reads the changes
-- after a destination's cursor, queues those that pass its filter, and settles each by seq, so a
-- failing destination never slows intake or projection. Times in ms since the epoch are the
-- loop's clock (next_at, lease_until); the others are UTC ISO 8601 with milliseconds.
CREATE TABLE destinations (
  account      text NOT NULL,
  destination  text NOT NULL,           -- dst_ and random base32
  url          text NOT NULL,           -- without user info: the credentials are sealed with the secrets
  sealed       text NOT NULL,           -- AES-256-GCM under the accounts key: the signing secrets, the URL's user info
  key_id       text NOT NULL,
  filter       text NOT NULL,           -- JSON: {"entity"?, "campaign"?, "min_score"?}
  rate         double precision,                    -- requests per second at most; NULL: no limit
  schedule     text NOT NULL,           -- JSON array: the delay in ms before each attempt
  state        text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
  state_reason text,
  cursor       bigint NOT NULL,        -- the last seq looked at: queued, or left out by the filter
  failures     integer NOT NULL DEFAULT 0,  -- consecutive failed attempts (the breaker)
  lease_owner  text,                    -- the process delivering it, until lease_until
  lease_until  bigint,
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  PRIMARY KEY (account, destination)
);

-- A change queued for a destination, until it is delivered (the row goes) or set aside ('dead').
-- It holds no copy of the change: the body is read from `changes` when it is sent, so an erasure
-- reaches what is queued.
CREATE TABLE destination_deliveries (
  account     text NOT NULL,
  destination text NOT NULL,
  seq         bigint NOT NULL,
  entity      text NOT NULL,
  entity_id   text NOT NULL,
  state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'dead')),
  attempts    integer NOT NULL DEFAULT 0,
  next_at     bigint NOT NULL,
  last_status integer,
  last_error  text,
  failed_at   text,
  PRIMARY KEY (account, destination, seq),
  FOREIGN KEY (account, destination) REFERENCES destinations (account, destination) ON DELETE CASCADE
);
-- Order per entity: a queued change waits for the earlier queued changes of its entity.
CREATE INDEX destination_deliveries_by_entity ON destination_deliveries (account, destination, entity, entity_id, seq)
  WHERE state = 'queued';

-- Bumped by every change the CLI makes to a destination: a running loop polls it to see one cheaply.
CREATE TABLE destinations_version (
  only_row integer PRIMARY KEY CHECK (only_row = 1),
  version  bigint NOT NULL
);
INSERT INTO destinations_version (only_row, version) VALUES (1, 0);
