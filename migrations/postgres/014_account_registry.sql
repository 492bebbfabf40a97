-- The accounts registry (docs/accounts.md): the agency accounts a receiver serves besides the
-- default one, each behind an opaque webhook path. Secrets and API keys are stored only as
-- AES-256-GCM ciphertext under a key kept outside the database, each with the id of that key.
CREATE TABLE accounts (
  account        text COLLATE "C" PRIMARY KEY,
  name           text,
  route_key      text COLLATE "C" NOT NULL UNIQUE,   -- random, base64url: /webhooks/<route_key>
  state          text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled')),
  api_key        text,                               -- ciphertext, or NULL
  api_key_key_id text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);

-- The secrets that verify an account's deliveries: the current one (expires_at NULL) and, during a
-- rotation's overlap, the previous one until it expires.
CREATE TABLE account_secrets (
  secret_id   bigserial PRIMARY KEY,
  account     text COLLATE "C" NOT NULL REFERENCES accounts (account),
  ciphertext  text NOT NULL,
  key_id      text NOT NULL,
  fingerprint text NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz
);
CREATE INDEX account_secrets_by_account ON account_secrets (account, secret_id);

-- One row, bumped in the transaction of every change (which its lock also serialises): replicas
-- poll it to see a change cheaply. key_id: the key every ciphertext is under (NULL until the first).
CREATE TABLE accounts_version (
  only_row integer PRIMARY KEY CHECK (only_row = 1),
  version  bigint NOT NULL,
  key_id   text
);
INSERT INTO accounts_version (only_row, version, key_id) VALUES (1, 0, NULL);

-- The audit trail of accounts removed with their data: never a secret.
CREATE TABLE account_removals (
  removal_id bigserial PRIMARY KEY,
  account    text COLLATE "C" NOT NULL,
  removed_at timestamptz NOT NULL,
  reason     text NOT NULL,
  inbox_rows bigint NOT NULL
);
