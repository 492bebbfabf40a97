-- The accounts registry (docs/accounts.md): the agency accounts a receiver serves besides the
-- default one, each behind an opaque webhook path. Secrets and API keys are stored only as
-- AES-256-GCM ciphertext under a key kept outside the database, each with the id of that key.
CREATE TABLE accounts (
  account        TEXT PRIMARY KEY,
  name           TEXT,
  route_key      TEXT NOT NULL UNIQUE,   -- random, base64url: /webhooks/<route_key>
  state          TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled')),
  api_key        TEXT,                   -- ciphertext, or NULL
  api_key_key_id TEXT,
  created_at     TEXT NOT NULL,          -- UTC ISO 8601 with milliseconds
  updated_at     TEXT NOT NULL
);

-- The secrets that verify an account's deliveries: the current one (expires_at NULL) and, during a
-- rotation's overlap, the previous one until it expires.
CREATE TABLE account_secrets (
  secret_id   INTEGER PRIMARY KEY,
  account     TEXT NOT NULL REFERENCES accounts (account),
  ciphertext  TEXT NOT NULL,
  key_id      TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  expires_at  TEXT
);
CREATE INDEX account_secrets_by_account ON account_secrets (account, secret_id);

-- One row, bumped in the transaction of every change: replicas poll it to see a change cheaply.
-- key_id: the key every ciphertext is under (NULL until the first is written).
CREATE TABLE accounts_version (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  version  INTEGER NOT NULL,
  key_id   TEXT
);
INSERT INTO accounts_version (only_row, version, key_id) VALUES (1, 0, NULL);

-- The audit trail of accounts removed with their data: never a secret.
CREATE TABLE account_removals (
  removal_id INTEGER PRIMARY KEY,
  account    TEXT NOT NULL,
  removed_at TEXT NOT NULL,
  reason     TEXT NOT NULL,
  inbox_rows INTEGER NOT NULL
);
