// What createReceiver takes.
import type { DispatcherOptions } from '../dispatch/dispatcher.js';
import type { Logger } from '../logging.js';
import type { IntakeRates } from '../receive/budget.js';
import type { AdmissionRules } from '../receive/admission.js';
import type { ResultListener } from '../receive/node-http.js';
import type { Secret } from '../signature.js';
import type { DatabaseOption } from '../store/open.js';

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
}
