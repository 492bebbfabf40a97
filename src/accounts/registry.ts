// The accounts registry (docs/accounts.md): the agency accounts one receiver serves besides the
// default one, each with an opaque webhook path, its secrets and its API key, sealed under the
// accounts key (cipher.ts, keys.ts), and the digest of its feed token (feed-tokens.ts). The SQL
// is the store's (src/store/accounts-registry.ts).
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_ACCOUNT, isAccountId } from '../receive/account.js';
import type { AccountRecord, AccountSecretRecord, AccountsRegistry, RegistrySnapshot, RegistryTx } from '../store/accounts-registry.js';
import type { StoreHandle } from '../store/handle.js';
import { storePorts } from '../store/store.js';
import type { Store } from '../store/store.js';
import { secretFingerprint } from '../signature.js';
import { accountsKey, destinationScope, open, seal } from './cipher.js';
import { AccountRequestError, AccountsKeyError, UnknownAccountError } from './errors.js';
import { feedTokenDigest, MIN_FEED_TOKEN_LENGTH } from './feed-tokens.js';
import { keyOf, requirePath, sealingKey, type KeySource } from './keys.js';
import { NEXT_SUFFIX, createKeyFile, newKey, promoteNextKey, readKeyFile, retiredKeyPath } from './key-file.js';
import { routesOf, type AccountRoutesSnapshot } from './routes.js';

/** Where `openAccounts` finds the accounts key, and its clock. */
export interface AccountsOptions {
  /** The accounts key file (32 bytes, base64). Required on PostgreSQL; on SQLite, default `<databaseFile>.accounts-key`, made at first need. */
  keyFile?: string;
  /** The SQLite database file, beside which the key is kept by default. Give it on SQLite only. */
  databaseFile?: string;
  /** Told once: a key file generated ("back it up"), a key file others can read. Default: nothing. */
  onNotice?: (message: string) => void;
  /** The clock (ms since the epoch), for tests of a rotation's overlap. */
  now?: () => number;
  /**
   * How long `remove` waits between disabling an account and erasing its rows (ms), so that every
   * receiver (each polls the registry every second) has stopped taking its deliveries: a delivery
   * taken meanwhile is erased with the rest instead of outliving the account. Default 3000.
   */
  removalSettleMs?: number;
}

/** An account as `list` shows it: never a secret or a key. */
export interface AccountSummary {
  /** The account id (a slug: lowercase letters, digits, `-`, `_`). */
  account: string;
  /** Its display name. */
  name: string | null;
  /** The path its deliveries are sent to (`/webhooks/<route key>`). */
  webhookPath: string;
  /** A disabled account's deliveries are refused (403). */
  state: 'active' | 'disabled';
  /** When it was added: UTC ISO 8601; null for the default account. */
  createdAt: string | null;
  /** Whether an API key is stored for it (never the key). */
  hasApiKey: boolean;
  /**
   * Whether a feed token opens its change feed (`GET /changes?account=<id>` of serve; never the
   * token). False for the default account, whose feed serve's own `--feed-token` opens.
   */
  hasFeedToken: boolean;
  /** The secrets that verify its deliveries now (2 during a rotation's overlap); null for the default account (serve --secret). */
  secrets: number | null;
  /** When the previous secret stops verifying, during an overlap. */
  previousSecretUntil: string | null;
}

/** An account to add. */
export interface AddAccount {
  /** The account id: a slug of lowercase letters, digits, `-` and `_`, 1 to 63 characters. */
  account: string;
  /** A display name. */
  name?: string;
  /** The webhook secret; when absent, one is generated and returned, once. */
  secret?: string;
  /** The service's API key of the account (for reconciliation), stored encrypted. */
  apiKey?: string;
}

/** The account added, the new secret's fingerprint, and the secret when it was generated (shown this once). */
export type AddedAccount = AccountSummary & { fingerprint: string; secret?: string };

/** A secret rotation's outcome. */
export interface RotatedSecret {
  /** The account. */
  account: string;
  /** The new secret's fingerprint. */
  fingerprint: string;
  /** The new secret, when it was generated: shown this once. */
  secret?: string;
  /** When the previous secret stops verifying (now when the overlap is 0). */
  previousSecretUntil: string;
}

/** An account removal's outcome. */
export interface RemovedAccount {
  /** The account removed. */
  account: string;
  /** When: UTC ISO 8601. */
  removedAt: string;
  /** Inbox rows erased with it. */
  inboxRows: number;
  /** false when a reader kept SQLite's WAL from being emptied (the bytes leave it at its next checkpoint). */
  scrubbed: boolean;
}

/** A rekey's outcome. */
export interface Rekeyed {
  /** The new key's id. */
  keyId: string;
  /** The replaced key's id; null when there was none. */
  previousKeyId: string | null;
  /** The key file, now holding the new key. */
  keyFile: string;
  /**
   * Where the replaced key now is, `<key file>.<its id>` (each replaced key keeps its own file):
   * keep it while backups made before the rekey are kept. Null when the registry held no value.
   */
  previousKeyFile: string | null;
  /** Values re-encrypted (secrets, API keys and destinations). */
  values: number;
}

/** The accounts registry (docs/accounts.md): `openAccounts` and `receiver.accounts()`. */
export interface Accounts {
  /** Adds an account, active; its secret is generated when not given. Rejects with AccountRequestError for an invalid or taken id. */
  add(request: AddAccount): Promise<AddedAccount>;
  /** The default account first (served at /webhooks, its secret from `serve --secret`), then the registry's. */
  list(): Promise<AccountSummary[]>;
  /** Refuses the account's deliveries (403) from now on; its rows stay. */
  disable(account: string): Promise<AccountSummary>;
  /** Takes the account's deliveries again. */
  enable(account: string): Promise<AccountSummary>;
  /** Erases every row of the account, then the account and its secrets; the removal is recorded (no secret). */
  remove(account: string, options: { reason: string }): Promise<RemovedAccount>;
  /**
   * The new secret (generated and returned, once, when absent) verifies at once; the previous one
   * for `keepPreviousMs` more (default 24 h; 0: no more).
   */
  rotateSecret(account: string, options?: { secret?: string; keepPreviousMs?: number }): Promise<RotatedSecret>;
  /** Sets the account's API key (for reconciliation), or clears it with null. */
  setApiKey(account: string, apiKey: string | null): Promise<AccountSummary>;
  /** The account's API key, decrypted; undefined when it has none. */
  apiKey(account: string): Promise<string | undefined>;
  /**
   * Sets the token that opens the account's change feed and nothing else (serve's
   * `GET /changes?account=<id>`, docs/changes.md), or removes it with null. Only its SHA-256 is
   * stored. Rejects with AccountRequestError for a token under 16 characters, or one another
   * account holds.
   */
  setFeedToken(account: string, token: string | null): Promise<AccountSummary>;
  /** Re-encrypts every value under a new key (random, or `newKey`), crash-safe; the key file then holds the new key. */
  rekey(options?: { newKey?: Uint8Array }): Promise<Rekeyed>;
  /** What the intake routes by: every account by its route key, with its secrets still valid now. */
  routes(): Promise<AccountRoutesSnapshot>;
  /** The change stamp: it changes with every change to the registry, whichever process made it. */
  version(): Promise<number>;
}

const DEFAULT_OVERLAP_MS = 24 * 60 * 60 * 1000;
const WEBHOOKS_PATH = '/webhooks';

/** What each operation works with. */
interface RegistryContext {
  /** Only for a removal: deleting the account's rows, then scrubbing them from the file. */
  store: Pick<Store, 'scrub'> & { forAccount(account: string): Pick<Store, 'write'> };
  registry: AccountsRegistry;
  keys: KeySource;
  now: () => number;
  removalSettleMs: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Twice the receivers' poll of the registry, and a second for deliveries already in a commit. */
const REMOVAL_SETTLE_MS = 3000;

function webhookPathOf(routeKey: string): string {
  return `${WEBHOOKS_PATH}/${routeKey}`;
}

/** Opens the registry of the store's database; the key file is read (or made) when a value is first sealed or opened. */
export function openAccounts(handle: StoreHandle, options: AccountsOptions = {}): Accounts {
  const store = storePorts(handle);
  const path = options.keyFile ?? (options.databaseFile === undefined ? undefined : `${options.databaseFile}.accounts-key`);
  const context: RegistryContext = {
    store,
    registry: store.registry,
    keys: {
      path,
      mayGenerate: options.databaseFile !== undefined,
      location: store.location,
      onNotice: options.onNotice ?? (() => undefined),
    },
    now: options.now ?? Date.now,
    removalSettleMs: options.removalSettleMs ?? REMOVAL_SETTLE_MS,
  };
  return {
    add: (request) => add(context, request),
    list: () => list(context),
    disable: (account) => setState(context, account, 'disabled'),
    enable: (account) => setState(context, account, 'active'),
    remove: (account, removal) => remove(context, account, removal.reason),
    rotateSecret: (account, rotation) => rotateSecret(context, account, rotation?.secret, rotation?.keepPreviousMs ?? DEFAULT_OVERLAP_MS),
    setApiKey: (account, apiKey) => setApiKey(context, account, apiKey),
    apiKey: (account) => apiKeyOf(context, account),
    setFeedToken: (account, token) => setFeedToken(context, account, token),
    rekey: (rekeyOptions) => rekey(context, rekeyOptions?.newKey),
    routes: async () => {
      const snapshot = await context.registry.snapshot();
      return routesOf(snapshot, (keyId) => keyOf(context.keys, keyId), context.now());
    },
    version: async () => (await context.registry.version()).version,
  };
}

/** Refuses what is not an account id, and the default account (which the registry does not hold). */
function checkId(account: string): void {
  if (account === DEFAULT_ACCOUNT)
    throw new AccountRequestError(
      `"${DEFAULT_ACCOUNT}" is the default account: it is served at ${WEBHOOKS_PATH} with the secret of serve --secret, not from the registry`,
    );
  if (!isAccountId(account))
    throw new AccountRequestError(
      `"${account}" is not an account id: use 1 to 63 lowercase letters, digits, "-" and "_", starting with a letter or digit`,
    );
}

function summaryOf(row: AccountRecord, secrets: readonly AccountSecretRecord[], now: number): AccountSummary {
  const live = secrets.filter((s) => s.account === row.account && (s.expires_at === null || Date.parse(s.expires_at) > now));
  const until = live.flatMap((s) => (s.expires_at === null ? [] : [s.expires_at])).sort();
  return {
    account: row.account,
    name: row.name,
    webhookPath: webhookPathOf(row.route_key),
    state: row.state,
    createdAt: row.created_at,
    hasApiKey: row.api_key !== null,
    hasFeedToken: row.feed_token_sha256 !== null,
    secrets: live.length,
    previousSecretUntil: until.at(-1) ?? null,
  };
}

const DEFAULT_SUMMARY: AccountSummary = {
  account: DEFAULT_ACCOUNT,
  name: null,
  webhookPath: WEBHOOKS_PATH,
  state: 'active',
  createdAt: null,
  hasApiKey: false,
  hasFeedToken: false,
  secrets: null,
  previousSecretUntil: null,
};

async function list(context: RegistryContext): Promise<AccountSummary[]> {
  const snapshot = await context.registry.snapshot();
  const now = context.now();
  return [DEFAULT_SUMMARY, ...snapshot.accounts.map((row) => summaryOf(row, snapshot.secrets, now))];
}

/** The account's row in a snapshot, or UnknownAccountError. */
function rowOf(snapshot: RegistrySnapshot, account: string): AccountRecord {
  checkId(account);
  const row = snapshot.accounts.find((a) => a.account === account);
  if (row === undefined) throw new UnknownAccountError(account);
  return row;
}

/** Runs a change to one existing account, and returns its summary after it. */
async function changeAccount(
  context: RegistryContext,
  account: string,
  work: (tx: RegistryTx, snapshot: RegistrySnapshot, at: string) => Promise<void>,
): Promise<AccountSummary> {
  return await context.registry.change(async (tx) => {
    const at = iso(context.now());
    await work(tx, await tx.snapshot(), at);
    const after = await tx.snapshot();
    return summaryOf(rowOf(after, account), after.secrets, context.now());
  });
}

/** Seals a value under the registry's key, and records that key in the transaction if it is the first. */
async function sealIn(
  tx: RegistryTx,
  context: RegistryContext,
  snapshot: RegistrySnapshot,
  account: string,
  column: 'secret' | 'api_key',
  value: string,
) {
  const key = sealingKey(context.keys, snapshot.keyId);
  if (snapshot.keyId === null) await tx.setKeyId(key.id);
  return { ciphertext: seal(key, account, column, value), keyId: key.id };
}

/** A webhook secret as add and rotate-secret make one when none is given: `whsec_` and 32 random bytes, in hex. */
function generatedSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}

async function add(context: RegistryContext, request: AddAccount): Promise<AddedAccount> {
  checkId(request.account);
  const generated = request.secret === undefined ? generatedSecret() : undefined;
  const secret = request.secret ?? generated!;
  if (secret.trim() === '') throw new AccountRequestError('the secret is empty');
  const summary = await context.registry.change(async (tx) => {
    const snapshot = await tx.snapshot();
    if (snapshot.accounts.some((a) => a.account === request.account))
      throw new AccountRequestError(`the account "${request.account}" exists already (rotate-secret changes its secret)`);
    const at = iso(context.now());
    const sealedSecret = await sealIn(tx, context, snapshot, request.account, 'secret', secret);
    const sealedKey =
      request.apiKey === undefined ? undefined : await sealIn(tx, context, snapshot, request.account, 'api_key', request.apiKey);
    // Opaque and unguessable: the path says nothing of the account, and cannot be found by trying.
    const routeKey = randomBytes(24).toString('base64url');
    const row: AccountRecord = {
      account: request.account,
      name: request.name ?? null,
      route_key: routeKey,
      state: 'active',
      api_key: sealedKey?.ciphertext ?? null,
      api_key_key_id: sealedKey?.keyId ?? null,
      feed_token_sha256: null,
      created_at: at,
      updated_at: at,
    };
    await tx.insertAccount(row);
    const fingerprint = secretFingerprint(secret);
    await tx.insertSecret({
      account: row.account,
      ciphertext: sealedSecret.ciphertext,
      key_id: sealedSecret.keyId,
      fingerprint,
      created_at: at,
      expires_at: null,
    });
    return { ...summaryOf(row, [], 0), secrets: 1, fingerprint };
  });
  return generated === undefined ? summary : { ...summary, secret: generated };
}

function setState(context: RegistryContext, account: string, state: 'active' | 'disabled'): Promise<AccountSummary> {
  return changeAccount(context, account, async (tx, snapshot, at) => {
    rowOf(snapshot, account);
    await tx.updateAccount(account, { state }, at);
  });
}

async function rotateSecret(
  context: RegistryContext,
  account: string,
  given: string | undefined,
  keepPreviousMs: number,
): Promise<RotatedSecret> {
  const generated = given === undefined ? generatedSecret() : undefined;
  const secret = given ?? generated!;
  if (secret.trim() === '') throw new AccountRequestError('the new secret is empty');
  if (!(keepPreviousMs >= 0)) throw new AccountRequestError('the overlap must be 0 or more');
  const now = context.now();
  const until = iso(now + keepPreviousMs);
  await changeAccount(context, account, async (tx, snapshot, at) => {
    rowOf(snapshot, account);
    // The previous secrets stop at the end of the overlap (earlier if they were to stop sooner).
    await tx.expireSecrets(account, until);
    await tx.forgetExpiredSecrets(iso(now));
    const sealed = await sealIn(tx, context, snapshot, account, 'secret', secret);
    await tx.insertSecret({
      account,
      ciphertext: sealed.ciphertext,
      key_id: sealed.keyId,
      fingerprint: secretFingerprint(secret),
      created_at: at,
      expires_at: null,
    });
    await tx.updateAccount(account, {}, at);
  });
  const rotated = { account, fingerprint: secretFingerprint(secret), previousSecretUntil: until };
  return generated === undefined ? rotated : { ...rotated, secret: generated };
}

function setApiKey(context: RegistryContext, account: string, apiKey: string | null): Promise<AccountSummary> {
  if (apiKey !== null && apiKey.trim() === '') throw new AccountRequestError('the API key is empty');
  return changeAccount(context, account, async (tx, snapshot, at) => {
    rowOf(snapshot, account);
    const sealed = apiKey === null ? null : await sealIn(tx, context, snapshot, account, 'api_key', apiKey);
    await tx.updateAccount(account, { api_key: sealed?.ciphertext ?? null, api_key_key_id: sealed?.keyId ?? null }, at);
  });
}

async function setFeedToken(context: RegistryContext, account: string, token: string | null): Promise<AccountSummary> {
  if (token !== null && token.length < MIN_FEED_TOKEN_LENGTH)
    throw new AccountRequestError(
      `the feed token is ${token.length} characters long; it needs at least ${MIN_FEED_TOKEN_LENGTH}, since it guards candidate data and anyone who reaches serve can try tokens (openssl rand -hex 24 makes one)`,
    );
  const digest = token === null ? null : feedTokenDigest(token);
  return await changeAccount(context, account, async (tx, snapshot, at) => {
    rowOf(snapshot, account);
    // One token, one account: a token two accounts held would open only one of their feeds.
    if (digest !== null && snapshot.accounts.some((a) => a.account !== account && a.feed_token_sha256 === digest))
      throw new AccountRequestError("this feed token is another account's: give each account its own");
    await tx.updateAccount(account, { feed_token_sha256: digest }, at);
  });
}

async function apiKeyOf(context: RegistryContext, account: string): Promise<string | undefined> {
  const row = rowOf(await context.registry.snapshot(), account);
  if (row.api_key === null || row.api_key_key_id === null) return undefined;
  return openValue(context, row.api_key_key_id, account, 'api_key', row.api_key);
}

/** A sealed value opened with the key of its id; a value that does not open is a key error, never a crash. */
function openValue(context: RegistryContext, keyId: string, account: string, column: 'secret' | 'api_key', sealed: string): string {
  const opened = open(keyOf(context.keys, keyId), account, column, sealed);
  if (opened === undefined)
    throw new AccountsKeyError(
      `the ${column === 'secret' ? 'secret' : 'API key'} of account "${account}" does not decrypt with the accounts key ${keyId}: ` +
        'the row was altered, or sealed under another key',
    );
  return opened;
}

async function remove(context: RegistryContext, account: string, reason: string): Promise<RemovedAccount> {
  if (reason.trim() === '') throw new AccountRequestError('a reason is required: it is kept in the audit trail (account_removals)');
  rowOf(await context.registry.snapshot(), account);
  // Disabled first, so that no delivery lands while its rows go; then the rows, then the account.
  await setState(context, account, 'disabled');
  await delay(context.removalSettleMs);
  const { inboxRows } = await context.store.forAccount(account).write((tx) => tx.deleteAccountRows());
  const removedAt = iso(context.now());
  await context.registry.change(async (tx) => {
    rowOf(await tx.snapshot(), account);
    await tx.removeAccount({ account, removed_at: removedAt, reason, inbox_rows: inboxRows });
  });
  const { complete } = await context.store.scrub();
  return { account, removedAt, inboxRows, scrubbed: complete };
}

/** The rekey's new key: in `<key file>.next` before any row is under it (an interrupted rekey's is taken up again). */
function nextKeyOf(path: string, given: Uint8Array | undefined) {
  const wanted = given === undefined ? undefined : accountsKey(given);
  const nextPath = `${path}${NEXT_SUFFIX}`;
  createKeyFile(nextPath, wanted ?? newKey());
  const next = readKeyFile(nextPath)!;
  if (wanted !== undefined && wanted.id !== next.id)
    throw new AccountRequestError(
      `${nextPath} holds another key (${next.id}), left by an earlier rekey: run rekey without a new key to finish it`,
    );
  return next;
}

async function rekey(context: RegistryContext, given: Uint8Array | undefined): Promise<Rekeyed> {
  const path = requirePath(context.keys);
  const before = await context.registry.version();
  // Reading the current key first: a wrong key file is refused before anything is written.
  const previousKeyId = before.keyId === null ? null : keyOf(context.keys, before.keyId).id;
  const next = nextKeyOf(path, given);
  const values = await context.registry.change(async (tx) => {
    const snapshot = await tx.snapshot();
    let count = 0;
    for (const s of snapshot.secrets) {
      await tx.rewrapSecret(
        s.secret_id,
        seal(next, s.account, 'secret', openValue(context, s.key_id, s.account, 'secret', s.ciphertext)),
        next.id,
      );
      count += 1;
    }
    for (const a of snapshot.accounts) {
      if (a.api_key === null || a.api_key_key_id === null) continue;
      const apiKey = openValue(context, a.api_key_key_id, a.account, 'api_key', a.api_key);
      await tx.updateAccount(a.account, { api_key: seal(next, a.account, 'api_key', apiKey), api_key_key_id: next.id }, iso(context.now()));
      count += 1;
    }
    for (const d of await tx.sealedDestinations()) {
      const scope = destinationScope(d.account, d.destination);
      const opened = open(keyOf(context.keys, d.key_id), scope, 'destination', d.sealed);
      if (opened === undefined)
        throw new AccountsKeyError(`the secrets of destination ${d.destination} do not decrypt with the accounts key ${d.key_id}`);
      await tx.rewrapDestination({ ...d, sealed: seal(next, scope, 'destination', opened), key_id: next.id });
      count += 1;
    }
    await tx.setKeyId(next.id);
    return count;
  });
  promoteNextKey(path, next.id);
  context.keys.keyring = undefined;
  return {
    keyId: next.id,
    previousKeyId,
    keyFile: path,
    previousKeyFile: previousKeyId === null ? null : retiredKeyPath(path, previousKeyId),
    values,
  };
}
