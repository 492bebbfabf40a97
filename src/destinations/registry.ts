// The destinations of a database (docs/destinations.md): added, listed, disabled, enabled, removed,
// their dead deliveries retried. The whole URL and the signing secrets are sealed under the
// accounts key, as account secrets are (src/accounts/cipher.ts), the destination's id in the
// authenticated data; the `url` column holds the URL as people see it (`maskedUrl`): its user info
// and its query's values masked, as either may be a credential.
import { randomBytes } from 'node:crypto';
import { destinationScope, open, seal } from '../accounts/cipher.js';
import { keyOf, sealingKey, type KeySource } from '../accounts/keys.js';
import { destinationsOf, type DestinationRecord, type DestinationsPort, type DestinationState, type QueuedSend } from './sql.js';
import { maskedUrl } from './masked-url.js';
import { nextAttemptAt } from './standing.js';
import type { StoreHandle } from '../store/handle.js';
import type { AccountsRegistry } from '../store/accounts-registry.js';
import type { ChangesPort } from '../store/ports/changes.js';
import { storePorts } from '../store/store.js';
import { DestinationRequestError } from './errors.js';
import { filterOf, passes, type DestinationFilter } from './filter.js';
import { changeOf } from '../project/changes.js';
import { networkPolicy, type NetworkPolicy, type NetworkRules } from './network-policy.js';
import { defaultStreamName } from './redis-stream.js';
import { DEFAULT_SCHEDULE } from './schedule.js';
import { checkSecret, generateSecret, generateSigningKey, isSigningKey, publicKeyOf } from './signing.js';
import {
  authOf,
  checkClientTls,
  checkHeaders,
  checkOAuth2,
  storedAuth,
  type ClientTls,
  type DestinationAuth,
  type OAuth2Client,
} from './authentication.js';

export interface DestinationsOptions {
  /** The accounts key file; on SQLite default `<databaseFile>.accounts-key` (made at first need). */
  keyFile?: string;
  /** The SQLite database file, beside which the key is kept by default. */
  databaseFile?: string;
  onNotice?: (message: string) => void;
  now?: () => number;
  /** Where destinations may connect: a URL whose host is an address it refuses is not added. */
  network?: NetworkRules;
}

export interface AddDestination {
  account: string;
  url: string;
  /** Default: generated (`whsec_` and 32 random bytes), returned once. */
  secret?: string;
  filter?: DestinationFilter;
  /** Requests per second at most. */
  rate?: number;
  /** The delay in ms before each attempt. */
  schedule?: readonly number[];
  /** A Redis destination's stream; default `prequal-hooks:<account>:changes`. */
  stream?: string;
  /** A NATS destination's subject (required for one): a JetStream stream of the operator's captures it. */
  subject?: string;
  /**
   * Where it starts: after this seq (0: every change the feed keeps). Default: the account's last
   * change when it is added (it receives what changes from then on).
   */
  after?: number;
  /** It receives the account's operator events (docs/destinations.md, "Operator events") instead of its changes. */
  operational?: boolean;
  /** Headers sent on every POST (http(s) only), sealed: `[name, value]`, as `parseHeader` gives them. */
  headers?: ReadonlyArray<[string, string]>;
  /** An OAuth2 client (client credentials) whose Bearer token each POST carries (http(s) only). */
  oauth2?: OAuth2Client;
  /** A client certificate and its key (mutual TLS), and authorities to trust (https, rediss, tls only). */
  tls?: ClientTls;
  /** `ed25519`: signed with a generated Ed25519 key (`v1a`), its public key returned once; default `hmac` (`v1`, a `whsec_` secret). */
  signing?: 'hmac' | 'ed25519';
}

/** A destination as `list` shows it: never a secret, its URL's password and query's values masked. */
export interface DestinationSummary {
  destination: string;
  account: string;
  url: string;
  state: DestinationState;
  reason: string | null;
  filter: DestinationFilter;
  rate: number | null;
  schedule: number[];
  /** A Redis destination's stream (absent for HTTP, or when the accounts key cannot open the destination). */
  stream?: string;
  /** A NATS destination's subject (absent for others, or when the accounts key cannot open the destination). */
  subject?: string;
  /** Changes of the account not delivered yet: queued, or not looked at yet. */
  lag: number;
  queued: number;
  dead: number;
  /**
   * When its next attempt is due (ISO 8601): the soonest due of its queued changes that come first
   * for their entity; while paused (and for a Redis stream), its oldest queued change's, the probe.
   * Null when nothing is queued, and while it is disabled or held.
   */
  nextAttemptAt: string | null;
  /** `operational`: it receives the account's operator events instead of its changes. */
  kind: 'changes' | 'operational';
  /** How it proves who is calling: signatures, header names, OAuth2 client, client certificate; never a secret. */
  auth: DestinationAuth;
  /** Where it goes: POSTed (`http`), appended to a Redis stream (`redis`), published through NATS JetStream (`nats`). */
  type: DestinationType;
  createdAt: string;
}

/** What the delivery loop opens: where to POST and what to sign with (the current secret first); a Redis destination's stream. */
export interface OpenedDestination {
  url: string;
  secrets: string[];
  stream?: string;
  /** A NATS destination's subject. */
  subject?: string;
  /** A client certificate and its key (PEM), and the authorities trusted instead of the system's. */
  tls?: ClientTls;
  /** Headers sent on every POST. */
  headers?: ReadonlyArray<[string, string]>;
  /** The OAuth2 client whose token each POST carries. */
  oauth2?: OAuth2Client;
}

/** As sealed: each secret with the end of its overlap (null: the current one); a Redis destination's stream, and no secret. */
interface SealedDestination {
  url: string;
  secrets: Array<{ secret: string; until: string | null }>;
  stream?: string;
  subject?: string;
  tls?: ClientTls;
  headers?: Array<[string, string]>;
  oauth2?: OAuth2Client;
}

export interface Destinations {
  /** Adds it; its generated secret (`whsec_`) or, with `signing: 'ed25519'`, its public key (`whpk_`), returned once. */
  add(request: AddDestination): Promise<DestinationSummary & { secret?: string; publicKey?: string }>;
  list(account?: string): Promise<DestinationSummary[]>;
  setState(account: string, destination: string, state: 'active' | 'disabled'): Promise<DestinationSummary>;
  remove(account: string, destination: string): Promise<void>;
  /**
   * A new secret (generated and returned, once, when absent) signs at once; the previous ones keep
   * signing beside it for `keepPreviousMs` more (0: no more), so the receiver can switch without a gap.
   */
  rotateSecret(
    account: string,
    destination: string,
    options: { secret?: string; keepPreviousMs: number; signing?: 'hmac' | 'ed25519' },
  ): Promise<{ secret?: string; publicKey?: string; previousUntil: string | null }>;
  /** Replaces its client certificate and key (and authorities): mutual TLS rotated. */
  setTls(account: string, destination: string, tls: ClientTls): Promise<DestinationSummary>;
  /** Dead deliveries back in the queue: one by seq, or all; how many. A Redis destination's first queued change is made due now too. */
  retry(account: string, destination: string, seq?: number): Promise<number>;
  dead(account: string, destination: string, limit: number): Promise<QueuedSend[]>;
  /** The URL and the secrets signing now, opened with the accounts key. */
  open(record: DestinationRecord): OpenedDestination;
  /**
   * Sends again the changes (operator events, for an operational destination) with
   * `after < seq <= until` (`until`: by default the last looked at) that pass its filter, each with
   * the `webhook-id` it had: queued due now, dead ones with their attempts from 0. How many.
   * Those after its cursor are not looked at yet: they come in their turn.
   */
  replay(account: string, destination: string, range: { after: number; until?: number }): Promise<number>;
}

/** Whether a destination's URL (as stored or given) is a Redis server's: its changes go to a stream, not POSTed. */
function isRedisUrl(url: string): boolean {
  return /^rediss?:/i.test(url);
}

/** Whether a destination's URL (as stored or given) is a NATS server's: its changes are published through JetStream. */
function isNatsUrl(url: string): boolean {
  return /^(nats|tls):/i.test(url);
}

/** What a destination is, by its URL: POSTed to, appended to a Redis stream, or published through NATS JetStream. */
export type DestinationType = 'http' | 'redis' | 'nats';

/** The type of a destination by its URL (as stored or given). */
export function destinationType(url: string): DestinationType {
  return isRedisUrl(url) ? 'redis' : isNatsUrl(url) ? 'nats' : 'http';
}

/**
 * `http(s)://…`, or `redis(s)://host:port[/db]` for a Redis stream, whose host is not an address
 * `policy` refuses (a name is checked when it resolves, at each connection).
 */
export function checkUrl(text: string, policy: NetworkPolicy = networkPolicy()): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DestinationRequestError(`--url must be an absolute http(s)://, redis(s)://, nats:// or tls:// URL, got "${maskedUrl(text)}"`);
  }
  if (url.protocol === 'redis:' || url.protocol === 'rediss:') {
    if (!/^(\/\d+)?$/.test(url.pathname) || url.search !== '' || url.hash !== '')
      throw new DestinationRequestError(`--url must be redis://host:port[/db], got "${maskedUrl(text)}"`);
  } else if (url.protocol === 'nats:' || url.protocol === 'tls:') {
    if (!['', '/'].includes(url.pathname) || url.search !== '' || url.hash !== '' || url.hostname === '')
      throw new DestinationRequestError(`--url must be nats://[user:password@]host:port (tls:// for TLS), got "${maskedUrl(text)}"`);
  } else if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DestinationRequestError(`--url must be http://, https://, redis://, rediss://, nats:// or tls://, got "${maskedUrl(text)}"`);
  const refused = policy.hostRefusal(url.hostname);
  if (refused !== undefined)
    throw new DestinationRequestError(
      `--url ${maskedUrl(text)} is refused: ${refused} (--destinations-allow opens a hole in a denied range)`,
    );
  return url;
}

// A subject to publish to: dot-separated tokens, no whitespace, no wildcard.
const SUBJECT = /^[^\s.*>]+(\.[^\s.*>]+)*$/;

/**
 * What a Redis or NATS destination is given: a stream (Redis) or a subject (NATS, required), and
 * no secret (nothing is signed) nor rate; a stream or a subject only for one.
 */
export function checkBrokerRequest(request: {
  url: string;
  secret?: string | undefined;
  stream?: string | undefined;
  subject?: string | undefined;
  rate?: number | undefined;
}): void {
  const type = destinationType(request.url);
  if (type !== 'http') {
    const scheme = type === 'redis' ? 'redis://' : 'nats://';
    if (request.secret !== undefined)
      throw new DestinationRequestError(`--secret is for http(s) destinations: nothing is signed for a ${scheme} one`);
    if (request.rate !== undefined)
      throw new DestinationRequestError(`--rate is for http(s) destinations: a ${scheme} one takes one change at a time`);
  }
  if (request.stream !== undefined && type !== 'redis') throw new DestinationRequestError('--stream is for redis:// destinations');
  if (request.stream !== undefined && request.stream.trim() === '') throw new DestinationRequestError('--stream must not be empty');
  if (request.subject !== undefined && type !== 'nats')
    throw new DestinationRequestError('--subject is for nats:// and tls:// destinations');
  if (type === 'nats' && request.subject === undefined)
    throw new DestinationRequestError('--subject is required for a nats:// destination: the subject a JetStream stream of yours captures');
  if (request.subject !== undefined && !(SUBJECT.test(request.subject) && request.subject.length <= 255))
    throw new DestinationRequestError(
      `--subject must be a NATS subject to publish to (tokens separated by dots, no space, no * or > wildcard), got "${request.subject}"`,
    );
}

/** The database as the registry uses it: the destinations' tables, each account's changes (its head, a range to send again), and the accounts key in use. */
interface RegistryStore {
  readonly destinations: DestinationsPort;
  forAccount(account: string): Pick<ChangesPort, 'changesAfter'>;
  readonly registry: Pick<AccountsRegistry, 'version'>;
}

function newId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return `dst_${[...randomBytes(12)].map((b) => alphabet[b % 32]).join('')}`;
}

function sealedOf(url: string, secrets: SealedDestination['secrets'], log: { stream?: string; subject?: string } = {}): SealedDestination {
  return {
    url,
    secrets,
    ...(log.stream !== undefined && { stream: log.stream }),
    ...(log.subject !== undefined && { subject: log.subject }),
  };
}

function unseal(keys: KeySource, record: DestinationRecord): SealedDestination {
  const text = open(keyOf(keys, record.key_id), destinationScope(record.account, record.destination), 'destination', record.sealed);
  if (text === undefined)
    throw new DestinationRequestError(
      `the secrets of destination ${record.destination} do not open with the accounts key ${record.key_id}`,
    );
  return JSON.parse(text) as SealedDestination;
}

async function rotateSecret(
  context: { store: RegistryStore; keys: KeySource; now: () => number },
  record: DestinationRecord,
  options: { secret?: string; keepPreviousMs: number; signing?: 'hmac' | 'ed25519' },
): Promise<{ secret?: string; publicKey?: string; previousUntil: string | null }> {
  if (options.secret !== undefined) checkSecret(options.secret);
  const sealed = unseal(context.keys, record);
  // Rotated to the kind it signs with now, unless asked for the other.
  const signing = options.signing ?? (sealed.secrets.some((s) => s.until === null && isSigningKey(s.secret)) ? 'ed25519' : 'hmac');
  if (signing === 'ed25519' && options.secret !== undefined)
    throw new DestinationRequestError('--secret goes with HMAC signing: an Ed25519 key is generated, and its public key printed');
  const secret = signing === 'ed25519' ? generateSigningKey() : (options.secret ?? generateSecret());
  const now = context.now();
  const previousUntil = options.keepPreviousMs > 0 ? new Date(now + options.keepPreviousMs).toISOString() : null;
  const kept = sealed.secrets
    .filter((s) => previousUntil !== null && (s.until === null || Date.parse(s.until) > now))
    .map((s) => ({ secret: s.secret, until: s.until === null || s.until > previousUntil! ? previousUntil : s.until }));
  if (sealed.stream !== undefined || sealed.subject !== undefined)
    throw new DestinationRequestError(
      `destination ${record.destination} is a ${sealed.stream === undefined ? 'NATS subject' : 'Redis stream'}: it has no secret`,
    );
  await reseal(context, record, { ...sealed, secrets: [{ secret, until: null }, ...kept] });
  if (signing === 'ed25519') return { publicKey: publicKeyOf(secret), previousUntil };
  return { ...(options.secret === undefined && { secret }), previousUntil };
}

/** Seals `sealed` again under the key in use, with its authentication as shown. */
async function reseal(
  context: { store: RegistryStore; keys: KeySource; now: () => number },
  record: DestinationRecord,
  sealed: SealedDestination,
): Promise<void> {
  const key = sealingKey(context.keys, (await context.store.registry.version()).keyId);
  await context.store.destinations.setSealed(
    record,
    seal(key, destinationScope(record.account, record.destination), 'destination', JSON.stringify(sealed)),
    key.id,
    new Date(context.now()).toISOString(),
    JSON.stringify(authOf(sealed)),
  );
}

/** What authenticates a destination, checked against its type: headers and OAuth2 for http(s) only, TLS for a TLS scheme. */
function checkAuthRequest(request: AddDestination, url: URL): Pick<SealedDestination, 'headers' | 'oauth2' | 'tls'> {
  const http = url.protocol === 'http:' || url.protocol === 'https:';
  if (!http && (request.headers?.length ?? 0) > 0) throw new DestinationRequestError('--header is for http(s) destinations');
  if (!http && request.oauth2 !== undefined) throw new DestinationRequestError('--oauth2-token-url is for http(s) destinations');
  if (request.signing === 'ed25519' && (!http || request.secret !== undefined))
    throw new DestinationRequestError('--signing ed25519 is for http(s) destinations, without --secret (its key is generated)');
  if (request.oauth2 !== undefined && (url.username !== '' || url.password !== ''))
    throw new DestinationRequestError(
      '--oauth2-token-url goes with a URL without a user name and password: each sends its own Authorization',
    );
  if (request.tls !== undefined && !['https:', 'rediss:', 'tls:'].includes(url.protocol))
    throw new DestinationRequestError('--client-cert, --client-key and --ca are for https://, rediss:// and tls:// destinations');
  const headers = [...(request.headers ?? [])];
  checkHeaders(headers, { oauth2: request.oauth2 !== undefined, userInfo: url.username !== '' || url.password !== '' });
  return {
    ...(headers.length > 0 && { headers }),
    ...(request.oauth2 !== undefined && { oauth2: checkOAuth2(request.oauth2) }),
    ...(request.tls !== undefined && { tls: checkClientTls(request.tls) }),
  };
}

/** A Redis destination's stream or a NATS one's subject, sealed with its URL's credentials; none when the key cannot open it. */
function logOf(keys: KeySource, row: DestinationRecord): { stream?: string; subject?: string } {
  const type = destinationType(row.url);
  if (type === 'http') return {};
  try {
    const sealed = unseal(keys, row);
    return type === 'redis' ? { stream: sealed.stream ?? defaultStreamName(row.account) } : { subject: sealed.subject ?? '' };
  } catch {
    return {}; // listed without it: the list needs no key
  }
}

async function summaryOf(store: RegistryStore, keys: KeySource, row: DestinationRecord): Promise<DestinationSummary> {
  const backlog = await store.destinations.backlog(row);
  const log = logOf(keys, row);
  return {
    destination: row.destination,
    account: row.account,
    url: row.url,
    state: row.state,
    reason: row.state_reason,
    filter: filterOf(row.filter),
    rate: row.rate,
    schedule: JSON.parse(row.schedule) as number[],
    ...log,
    lag: Math.max(0, backlog.last - row.cursor) + backlog.queued,
    queued: backlog.queued,
    dead: backlog.dead,
    nextAttemptAt: nextAttemptAt(row, backlog.due),
    kind: row.kind,
    type: destinationType(row.url),
    auth: storedAuth(row.url, row.auth),
    createdAt: row.created_at,
  };
}

/** The last seq of what the destination reads: the account's changes, or its operator events. */
async function headOf(store: RegistryStore, account: string, kind: 'changes' | 'operational'): Promise<number> {
  return kind === 'operational'
    ? (await store.destinations.events(account, Number.MAX_SAFE_INTEGER, 1)).last
    : (await store.forAccount(account).changesAfter(Number.MAX_SAFE_INTEGER, 1)).last;
}

/** A page of what a destination reads after `after`: each item's seq and entity, and the last seq read (undefined: none). */
async function pageOf(
  store: RegistryStore,
  record: DestinationRecord,
  after: number,
): Promise<{ items: Array<{ seq: number; entity: string; id: string }>; last: number | undefined }> {
  if (record.kind === 'operational') {
    const { events } = await store.destinations.events(record.account, after, 500);
    return { items: events.map((e) => ({ seq: e.seq, entity: 'operator', id: 'events' })), last: events.at(-1)?.seq };
  }
  const { changes } = await store.forAccount(record.account).changesAfter(after, 500);
  const filter = filterOf(record.filter);
  const items = changes
    .map(changeOf)
    .filter((change) => passes(filter, change))
    .map((change) => ({ seq: change.seq, entity: change.entity, id: change.id }));
  return { items, last: changes.at(-1)?.seq };
}

/** Sends a range again (Destinations.replay). */
async function replay(
  store: RegistryStore,
  now: () => number,
  record: DestinationRecord,
  range: { after: number; until?: number },
): Promise<number> {
  if (range.until !== undefined && range.until < range.after)
    throw new DestinationRequestError(`--until (${range.until}) must not be below --after (${range.after})`);
  const until = Math.min(range.until ?? record.cursor, record.cursor);
  let queued = 0;
  for (let after = range.after; after < until;) {
    const { items, last } = await pageOf(store, record, after);
    queued += await store.destinations.requeue(
      record,
      items.filter((item) => item.seq <= until),
      now(),
    );
    if (last === undefined) break;
    after = last;
  }
  return queued;
}

async function found(store: RegistryStore, account: string, destination: string): Promise<DestinationRecord> {
  const row = await store.destinations.get({ account, destination });
  if (row === undefined)
    throw new DestinationRequestError(
      `account "${account}" has no destination "${destination}" ("prequal-hooks destinations list" shows them)`,
    );
  return row;
}

async function add(store: RegistryStore, keys: KeySource, context: { now: () => number; policy: NetworkPolicy }, request: AddDestination) {
  const { now } = context;
  const url = checkUrl(request.url, context.policy);
  checkBrokerRequest(request);
  const type = destinationType(url.href);
  if (request.secret !== undefined) checkSecret(request.secret);
  const authentication = checkAuthRequest(request, url);
  const ed25519 = request.signing === 'ed25519';
  const secret = type !== 'http' ? undefined : ed25519 ? generateSigningKey() : (request.secret ?? generateSecret());
  const log =
    type === 'redis'
      ? { stream: request.stream ?? defaultStreamName(request.account) }
      : type === 'nats'
        ? { subject: request.subject! }
        : {};
  const destination = newId();
  const key = sealingKey(keys, (await store.registry.version()).keyId);
  const content: SealedDestination = {
    ...sealedOf(url.href, secret === undefined ? [] : [{ secret, until: null }], log),
    ...authentication,
  };
  const sealed = seal(key, destinationScope(request.account, destination), 'destination', JSON.stringify(content));
  if (request.after !== undefined) {
    const head = await headOf(store, request.account, request.operational === true ? 'operational' : 'changes');
    if (!(Number.isSafeInteger(request.after) && request.after >= 0 && request.after <= head))
      throw new DestinationRequestError(`--after must be a seq from 0 to the account's last, ${head}; got ${String(request.after)}`);
  }
  if (request.operational === true && (type !== 'http' || request.filter !== undefined))
    throw new DestinationRequestError(
      'an operational destination is http(s):// and takes no filter: it receives every operator event of its account',
    );
  const row = await store.destinations.add({
    account: request.account,
    kind: request.operational === true ? 'operational' : 'changes',
    ...(request.after !== undefined && { after: request.after }),
    destination,
    url: maskedUrl(url.href),
    sealed,
    key_id: key.id,
    filter: JSON.stringify(request.filter ?? {}),
    rate: request.rate ?? null,
    schedule: JSON.stringify(request.schedule ?? DEFAULT_SCHEDULE),
    auth: JSON.stringify(authOf(content)),
    created_at: new Date(now()).toISOString(),
  });
  return {
    ...(await summaryOf(store, keys, row)),
    ...(request.secret === undefined && secret !== undefined && !ed25519 && { secret }),
    ...(ed25519 && secret !== undefined && { publicKey: publicKeyOf(secret) }),
  };
}

/** Opens the destinations of the store's database; the accounts key is read when a destination is added or opened. */
export function openDestinations(handle: StoreHandle, options: DestinationsOptions = {}): Destinations {
  const ports = storePorts(handle);
  const store: RegistryStore = {
    destinations: destinationsOf(ports),
    forAccount: (account) => ports.forAccount(account),
    registry: ports.registry,
  };
  const now = options.now ?? Date.now;
  const keys: KeySource = {
    path: options.keyFile ?? (options.databaseFile === undefined ? undefined : `${options.databaseFile}.accounts-key`),
    mayGenerate: options.databaseFile !== undefined,
    location: ports.location,
    onNotice: options.onNotice ?? (() => undefined),
  };
  const policy = networkPolicy(options.network);
  return {
    add: (request) => add(store, keys, { now, policy }, request),
    list: async (account) => Promise.all((await store.destinations.list(account)).map((row) => summaryOf(store, keys, row))),
    async setState(account, destination, state) {
      await found(store, account, destination);
      await store.destinations.setState({ account, destination }, state, null, new Date(now()).toISOString());
      return await summaryOf(store, keys, await found(store, account, destination));
    },
    async remove(account, destination) {
      await found(store, account, destination);
      await store.destinations.remove({ account, destination });
    },
    async retry(account, destination, seq) {
      const record = await found(store, account, destination);
      if (destinationType(record.url) !== 'http') return await store.destinations.retryFirst({ account, destination }, seq, now());
      return await store.destinations.retryDead({ account, destination }, seq, now());
    },
    async dead(account, destination, limit) {
      await found(store, account, destination);
      return await store.destinations.deliveries({ account, destination }, 'dead', limit);
    },
    replay: async (account, destination, range) => replay(store, now, await found(store, account, destination), range),
    async rotateSecret(account, destination, options) {
      return await rotateSecret({ store, keys, now }, await found(store, account, destination), options);
    },
    async setTls(account, destination, tls) {
      const record = await found(store, account, destination);
      if (!/^(https|rediss|tls):/i.test(record.url))
        throw new DestinationRequestError(`destination ${destination} is not https://, rediss:// nor tls://: it has no TLS to set`);
      await reseal({ store, keys, now }, record, { ...unseal(keys, record), tls: checkClientTls(tls) });
      return await summaryOf(store, keys, await found(store, account, destination));
    },
    open(record) {
      const sealed = unseal(keys, record);
      const at = now();
      const secrets = sealed.secrets.filter((s) => s.until === null || Date.parse(s.until) > at).map((s) => s.secret);
      return {
        url: sealed.url,
        secrets,
        ...(sealed.stream !== undefined && { stream: sealed.stream }),
        ...(sealed.subject !== undefined && { subject: sealed.subject }),
        ...(sealed.tls !== undefined && { tls: sealed.tls }),
        ...(sealed.headers !== undefined && { headers: sealed.headers }),
        ...(sealed.oauth2 !== undefined && { oauth2: sealed.oauth2 }),
      };
    },
  };
}
