// What createReceiver takes.
import type { NetworkRules } from '../destinations/network-policy.js';
import type { DispatcherOptions } from '../dispatch/dispatcher.js';
import type { Logger } from '../logging.js';
import type { IntakeRates } from '../receive/budget.js';
import type { AdmissionRules } from '../receive/admission.js';
import type { ResultListener } from '../receive/node-http.js';
import type { Secret } from '../signature.js';
import type { DatabaseOption } from '../store/open.js';
import type { ReconcileClient } from '../reconcile/index.js';

/** How `createReceiver` receives, stores and projects; only `database` is required (and a secret, or `allowUnsigned`). */
export interface ReceiverOptions {
  /**
   * Where the state lives: a SQLite file path (created with its folder), `:memory:`, an open
   * better-sqlite3 database, a `postgres://…` URL, or an existing `pg.Pool`.
   */
  database: DatabaseOption;
  /** PostgreSQL given as a URL: connections in the pool. Default 10. */
  poolSize?: number;
  /**
   * false: refuse to open a database that needs migrations (a MigrationsPendingError, from
   * createReceiver on SQLite, from `ready()` on PostgreSQL) instead of applying them, for
   * operators who migrate explicitly (`prequal-hooks migrate`). Default true.
   */
  migrate?: boolean;
  /** PostgreSQL given as a URL: the schema of the tables. Default `public`. */
  schema?: string;
  /**
   * The other accounts this receiver serves, at `/webhooks/<route key>` (docs/accounts.md), read
   * from the database's registry (`prequal-hooks accounts add`, `openAccounts`) and polled every
   * `everyMs` (default 1000). `keyFile`: the accounts key that opens their secrets (required on
   * PostgreSQL; on SQLite default `<database file>.accounts-key`). `false`: the default account only.
   */
  accounts?: false | { keyFile?: string; databaseFile?: string; everyMs?: number };
  /** The default account's shared secret from the agency dashboard. */
  secret?: Secret;
  /** Several secrets during a rotation; any one of them may sign. */
  secrets?: readonly Secret[];
  /** Accept unsigned events. Refused unless set explicitly, and only when no secret is given. */
  allowUnsigned?: boolean;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * The bytes of request bodies the middleware and the node:http and fetch handlers hold at once
   * before their signatures are verified, all requests together; past it, new bodies get
   * `503 BUSY` with `Retry-After`, unread. Default 64 MiB; no smaller than `maxBodyBytes`.
   */
  maxBufferedBytes?: number;
  /**
   * How slowly a body may come: after `minRateGraceMs` (default 5000), a body that came slower
   * than `minBytesPerSecond` (default 240; 0: no minimum) since its start is cut off with 408.
   * While the budget is full, a body that received less than `slowBytesPerSecond` (default 16 KiB)
   * in the last second gives way to one that needs the room (docs/security.md, "Limits").
   */
  bodyRates?: Omit<IntakeRates, 'now'>;
  /**
   * Who is read and verified first when requests contend for the event loop (docs/security.md,
   * "Limits"): an address's budget of failed requests (`failureBurst` at once, default 5;
   * `failuresPerSecond` earned back, default 1, and one more by each request that verifies), the
   * loop's utilization that means contention (`contentionUtilization`, default 0.9 of a quarter
   * of a second) and how long it is held (`contentionHoldMs`, default 5000), and the requests one
   * address may have read and verified at once under contention (`share`, default 32).
   */
  admission?: Partial<AdmissionRules>;
  /** Default `X-Service-Signature`: put the service's real name in place of "Service". */
  signatureHeader?: string;
  /** Default `X-Service-Event`. */
  eventHeader?: string;
  /**
   * How long a write waits before answering 503 (ms): on SQLite for another connection's lock,
   * on PostgreSQL for a connection or a statement. Default 2000 (SQLite), 4000 (PostgreSQL).
   */
  busyTimeoutMs?: number;
  /** A pino logger; default: JSON lines at level `warn` on stdout, with PII redacted. */
  logger?: Logger;
  /** Called after each request is answered (for access logs and metrics). */
  onRequest?: ResultListener;
  /** Batch size, handler concurrency, attempts, retry delay and leases of the dispatcher. */
  dispatch?: DispatcherOptions;
  /**
   * A heartbeat row in the database, refreshed every `everyMs` (default 5000) while this receiver
   * runs and removed when it closes: it tells `prequal-hooks replay` and `dead-letters reprocess`
   * on the same database to leave their events to this receiver, which projects them and runs its
   * handlers. `false`: none (a short-lived script that only drains, and should not be handed work).
   */
  heartbeat?: false | { everyMs?: number };
  /** When onErase hooks look for erasures owed (another process's, failed rounds), and how long a failed round waits (ms). Defaults: 30 s, 1 min doubling up to 1 h. */
  eraseHooks?: { pollMs?: number; roundDelayMs?: number; maxRoundDelayMs?: number };
  /**
   * The destinations of every account (docs/destinations.md), added with `prequal-hooks
   * destinations add` or `openDestinations`, are delivered while the receiver is open, as `serve`
   * delivers them; `close()` waits for the requests in flight a bounded time. Without a destination
   * in the database this costs a read of an empty table every `pollMs`. Default: on, unless
   * `heartbeat: false` (a script that should not be handed work); `false`: off.
   */
  destinations?: false | DestinationsOptions;
  /**
   * How long the change feed's changes are kept from when they were recorded (docs/changes.md,
   * "Retention"): a duration as `serve --changes-retention` takes it (`30d`; units s, m, h, d, w),
   * or milliseconds. Older ones are dropped at start and then hourly, never one a destination still
   * needs; a reader asking from before the oldest kept is told (`ChangesDroppedError`, `410`).
   * Default `30d`, unless `heartbeat: false`; `false`: every change is kept.
   */
  changesRetention?: string | number | false;
  /** Reconciliation on a schedule (docs/reconcile.md), as `serve --reconcile-every` runs it. Default: none. */
  reconcile?: ReconcileEvery;
  /**
   * Retention of personal data (docs/personal-data.md): at start and then daily, every candidate
   * of the default account not heard of for this long is erased, by the rules of `eraseInactive`,
   * as `serve --erase-inactive-after` does; a duration (`730d`) or milliseconds. Default: never.
   */
  eraseInactiveAfter?: string | number | false;
}

/** How a receiver sends the changes to the destinations (`ReceiverOptions.destinations`). */
export interface DestinationsOptions {
  /**
   * The accounts key that opens each destination's URL and secrets. Default `accounts.keyFile`,
   * else on SQLite `<database file>.accounts-key`, where `destinations add` keeps it. A destination
   * that does not open is not taken: another process that holds the key delivers it.
   */
  keyFile?: string;
  /**
   * Where destinations may connect (docs/destinations.md, "Network policy"): never link-local or
   * cloud metadata addresses; `deny` adds ranges (CIDR, or an address), `allow` opens holes in
   * any of them, as `serve --destinations-deny` and `--destinations-allow`. A bad range throws
   * ConfigurationError.
   */
  network?: NetworkRules;
  /** How often the destinations and the changes are looked at (ms), besides each commit of changes. Default 500. */
  pollMs?: number;
}

/** Reconciliation on a schedule (`ReceiverOptions.reconcile`). */
export interface ReconcileEvery {
  /**
   * How often: a duration (`15m`; units s, m, h, d, w) or milliseconds. The first run comes a
   * minute after the start (sooner for a shorter period), each next one this long after the last
   * ended, never two at once; a run the receiver's close interrupts resumes at the next start.
   */
  every: string | number;
  /**
   * The default account's client of the service (`createClient` of `prequal-hooks/client`), or a
   * function giving the one to use at each run (a key read again). None: the default account is
   * not reconciled.
   */
  client?: ReconcileClient | (() => ReconcileClient);
  /**
   * The registry's other accounts that have an API key of their own (`accounts set-api-key`) are
   * reconciled too, each with its key, at this address of the service, on schedules spread over
   * the period. None: only the default account.
   */
  accounts?: { baseUrl: string; allowInsecureHttp?: boolean };
}
