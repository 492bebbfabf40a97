// The accounts registry's SQL (src/accounts/), written once for both engines in their own
// placeholders: the accounts, their encrypted secrets and feed token digests, the change stamp
// replicas poll and the audit trail of removals. The registry is the database's, not one account's.
import type { EngineSql } from './engine-sql.js';

type AccountState = 'active' | 'disabled';

/** An `accounts` row: `api_key` is ciphertext (src/accounts/cipher.ts), never the key. */
export interface AccountRecord {
  account: string;
  name: string | null;
  route_key: string;
  state: AccountState;
  api_key: string | null;
  api_key_key_id: string | null;
  /** The SHA-256 (hex) of the token that opens the account's change feed alone; never the token. */
  feed_token_sha256: string | null;
  /** UTC ISO 8601 with milliseconds. */
  created_at: string;
  updated_at: string;
}

/** An `account_secrets` row: the current secret (`expires_at` null) or a previous one until it expires. */
export interface AccountSecretRecord {
  secret_id: number;
  account: string;
  ciphertext: string;
  key_id: string;
  fingerprint: string;
  created_at: string;
  expires_at: string | null;
}

/** The change stamp, and the id of the key every ciphertext is under (null before the first). */
interface RegistryVersion {
  version: number;
  keyId: string | null;
}

/** The whole registry as of one version. */
export interface RegistrySnapshot extends RegistryVersion {
  accounts: AccountRecord[];
  secrets: AccountSecretRecord[];
}

/** A destination's sealed value as a rekey reads and rewrites it. */
interface SealedDestinationRecord {
  account: string;
  destination: string;
  sealed: string;
  key_id: string;
}

interface AccountRemoval {
  account: string;
  removed_at: string;
  reason: string;
  inbox_rows: number;
}

/** The statements of one registry change, in its transaction. */
export interface RegistryTx {
  snapshot(): Promise<RegistrySnapshot>;
  insertAccount(row: AccountRecord): Promise<void>;
  /** Sets these columns of the account's row (and `updated_at`). */
  updateAccount(
    account: string,
    set: Partial<Pick<AccountRecord, 'state' | 'name' | 'api_key' | 'api_key_key_id' | 'feed_token_sha256'>>,
    at: string,
  ): Promise<void>;
  insertSecret(row: Omit<AccountSecretRecord, 'secret_id'>): Promise<void>;
  /** The account's secrets that would outlive `expiresAt` (the current one included) expire then. */
  expireSecrets(account: string, expiresAt: string): Promise<void>;
  /** Forgets secrets of every account that expired before `at`. */
  forgetExpiredSecrets(at: string): Promise<void>;
  /** Replaces a secret's ciphertext (a rekey). */
  rewrapSecret(secretId: number, ciphertext: string, keyId: string): Promise<void>;
  /** Every destination's sealed URL and secrets (src/destinations/), with the key each is under. */
  sealedDestinations(): Promise<SealedDestinationRecord[]>;
  /** Replaces a destination's sealed value (a rekey). */
  rewrapDestination(row: SealedDestinationRecord): Promise<void>;
  /** The key every ciphertext is under from now on. */
  setKeyId(keyId: string): Promise<void>;
  /** Deletes the account's secrets and row, and records the removal. */
  removeAccount(removal: AccountRemoval): Promise<void>;
}

/** The registry as the store offers it (`Store.registry`). */
export interface AccountsRegistry {
  version(): Promise<RegistryVersion>;
  /** Every account and secret as of one version (read again if a change came between the reads). */
  snapshot(): Promise<RegistrySnapshot>;
  /** Runs `work` in one write transaction that bumps the change stamp first (so changes queue behind each other). */
  change<T>(work: (tx: RegistryTx) => Promise<T>): Promise<T>;
  /** The removals recorded, oldest first. */
  removals(): Promise<AccountRemoval[]>;
}

/** A statement runner of an engine: reads as `EngineSql`, and writes. */
export interface RegistrySql extends EngineSql {
  run(sql: string, parameters: readonly unknown[]): void | Promise<void>;
}

/** How an engine runs the registry's statements: outside a transaction, or in a write transaction of its own. */
export interface RegistryEngine {
  pooled: RegistrySql;
  transaction<T>(work: (sql: RegistrySql) => Promise<T>): Promise<T>;
}

const ACCOUNT_COLUMNS = 'account, name, route_key, state, api_key, api_key_key_id, feed_token_sha256, created_at, updated_at';
const SECRET_COLUMNS = 'secret_id, account, ciphertext, key_id, fingerprint, created_at, expires_at';

async function readVersion(sql: EngineSql): Promise<RegistryVersion> {
  const [row] = await sql.rows<{ version: number | string; key_id: string | null }>(
    'SELECT version, key_id FROM accounts_version WHERE only_row = 1',
    [],
  );
  return { version: Number(row?.version ?? 0), keyId: row?.key_id ?? null };
}

async function readSnapshot(sql: EngineSql): Promise<RegistrySnapshot> {
  for (;;) {
    const before = await readVersion(sql);
    const accounts = await sql.rows<AccountRecord>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY account`, []);
    const secrets = (
      await sql.rows<AccountSecretRecord>(`SELECT ${SECRET_COLUMNS} FROM account_secrets ORDER BY account, secret_id`, [])
    ).map((s) => ({ ...s, secret_id: Number(s.secret_id) }));
    const after = await readVersion(sql);
    if (after.version === before.version) return { ...after, accounts, secrets };
  }
}

function registryTx(sql: RegistrySql): RegistryTx {
  const $ = (n: number) => sql.placeholder(n);
  const run = async (text: string, parameters: readonly unknown[]) => await sql.run(text, parameters);
  return {
    snapshot: () => readSnapshot(sql),
    insertAccount: (r) =>
      run(`INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map($).join(', ')})`, [
        r.account,
        r.name,
        r.route_key,
        r.state,
        r.api_key,
        r.api_key_key_id,
        r.feed_token_sha256,
        r.created_at,
        r.updated_at,
      ]),
    async updateAccount(account, set, at) {
      const columns = Object.entries(set).filter(([, v]) => v !== undefined);
      const assignments = columns.map(([column], i) => `${column} = ${$(i + 1)}`);
      await run(
        `UPDATE accounts SET ${[...assignments, `updated_at = ${$(columns.length + 1)}`].join(', ')} WHERE account = ${$(columns.length + 2)}`,
        [...columns.map(([, v]) => v), at, account],
      );
    },
    insertSecret: (s) =>
      run(
        `INSERT INTO account_secrets (account, ciphertext, key_id, fingerprint, created_at, expires_at) VALUES (${[1, 2, 3, 4, 5, 6].map($).join(', ')})`,
        [s.account, s.ciphertext, s.key_id, s.fingerprint, s.created_at, s.expires_at],
      ),
    expireSecrets: (account, expiresAt) =>
      run(`UPDATE account_secrets SET expires_at = ${$(1)} WHERE account = ${$(2)} AND (expires_at IS NULL OR expires_at > ${$(3)})`, [
        expiresAt,
        account,
        expiresAt,
      ]),
    forgetExpiredSecrets: (at) => run(`DELETE FROM account_secrets WHERE expires_at IS NOT NULL AND expires_at < ${$(1)}`, [at]),
    rewrapSecret: (secretId, ciphertext, keyId) =>
      run(`UPDATE account_secrets SET ciphertext = ${$(1)}, key_id = ${$(2)} WHERE secret_id = ${$(3)}`, [ciphertext, keyId, secretId]),
    sealedDestinations: async () =>
      await sql.rows<SealedDestinationRecord>(
        'SELECT account, destination, sealed, key_id FROM destinations ORDER BY account, destination',
        [],
      ),
    async rewrapDestination(d) {
      await run(`UPDATE destinations SET sealed = ${$(1)}, key_id = ${$(2)} WHERE account = ${$(3)} AND destination = ${$(4)}`, [
        d.sealed,
        d.key_id,
        d.account,
        d.destination,
      ]);
      await run('UPDATE destinations_version SET version = version + 1 WHERE only_row = 1', []);
    },
    setKeyId: (keyId) => run(`UPDATE accounts_version SET key_id = ${$(1)} WHERE only_row = 1`, [keyId]),
    async removeAccount(r) {
      await run(`DELETE FROM account_secrets WHERE account = ${$(1)}`, [r.account]);
      await run(`DELETE FROM accounts WHERE account = ${$(1)}`, [r.account]);
      await run(`INSERT INTO account_removals (account, removed_at, reason, inbox_rows) VALUES (${$(1)}, ${$(2)}, ${$(3)}, ${$(4)})`, [
        r.account,
        r.removed_at,
        r.reason,
        r.inbox_rows,
      ]);
    },
  };
}

/** The registry on an engine's statement runner. */
export function accountsRegistry(engine: RegistryEngine): AccountsRegistry {
  return {
    version: () => readVersion(engine.pooled),
    snapshot: () => readSnapshot(engine.pooled),
    change: (work) =>
      engine.transaction(async (sql) => {
        await sql.run('UPDATE accounts_version SET version = version + 1 WHERE only_row = 1', []);
        return await work(registryTx(sql));
      }),
    removals: async () =>
      (
        await engine.pooled.rows<AccountRemoval>(
          'SELECT account, removed_at, reason, inbox_rows FROM account_removals ORDER BY removal_id',
          [],
        )
      ).map((r) => ({ ...r, inbox_rows: Number(r.inbox_rows) })),
  };
}
