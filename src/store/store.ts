// The one storage boundary. The intake, the dispatcher, replay, dead letters, queries, settings
// and the CLI speak to its ports (write-ports.ts, ports/), whose sum a `Store` is; each engine
// (store/sqlite/, store/postgres/) implements it. Every call is asynchronous, since an engine may
// be remote. Row shapes are in rows.ts, the error type in errors.ts.
import type { AccountsRegistry } from './accounts-registry.js';
import type { StoreHandle } from './handle.js';
import type { ChangesPort } from './ports/changes.js';
import type { FeatureSql } from './feature-sql.js';
import type { InboxPort } from './ports/inbox.js';
import type { PeopleReads } from './ports/people.js';
import type { ProjectedReads } from './ports/projected.js';
import type { ReadModel } from './ports/read-model.js';
import type { AccountsWithWork, ReadinessProbe } from './rows.js';
import type {
  BulkLoad,
  BulkMode,
  DeadLettersPort,
  ErasurePort,
  HandlerClaimsPort,
  IntakePort,
  PresencePort,
  SettingsPort,
  Transactions,
  WorkSignals,
  WriteTx,
} from './write-ports.js';

/** What a store does for its life beside `StoreHandle`'s `location` and `close`. */
interface Lifecycle {
  /** Makes every write committed so far durable, those committed with `durable: false` included. */
  flush(): Promise<void>;
  /** Whether a write can be taken now (readiness), without waiting on another's lock. */
  probe(): Promise<ReadinessProbe>;
}

/**
 * Scoping to accounts (docs/projection.md section 9). A store is a view of one account: every
 * read, key, claim, erasure and rebuild it does reaches that account's rows only, and the rows it
 * writes carry it. Exceptions, which span the database: `append` (and `appendSettled`) write each
 * delivery under its own `Delivery.account`; operations by inbox id (`inboxRow`, `settle`,
 * `claimPendingRow`, `handlersDone`, the handler leases) reach the row whatever its account, since
 * ids are unique across accounts; settings, presence, `scrub`, `flush`, `probe`, `close` and
 * `claimErasureHooks` are the database's.
 */
export interface AccountScope {
  /** The account this view reaches (`openStore` opens the default account's). */
  readonly account: string;
  /** The same store (connection, lifecycle) scoped to another account; cheap, cached. Close only the store `openStore` returned. */
  forAccount(account: string): Store;
  /** Which accounts have work waiting, across the database. */
  accountsWithWork(): Promise<AccountsWithWork>;
}

/**
 * The store `openStore` opens, which the receiver, `createQueries`, `rebuild`, `eraseCandidate` and
 * the other functions of the API take. Only the engines of this package implement it: its members
 * change with the pipeline, and a store of your own is not supported.
 */
export interface Store
  extends
    StoreHandle,
    Transactions<WriteTx>,
    IntakePort,
    InboxPort,
    DeadLettersPort,
    HandlerClaimsPort,
    SettingsPort,
    PresencePort,
    ErasurePort,
    ChangesPort,
    WorkSignals,
    Lifecycle,
    AccountScope {
  /** The same store scoped to another account, with all its ports (`AccountScope.forAccount`). */
  forAccount(account: string): Store;
  /** What is read about a person (export, retention) and the audit trail of erasures. */
  readonly people: PeopleReads;
  /** The projected rows by key. */
  readonly projected: ProjectedReads;
  /** The reads of the console, the CLI and the queries: campaigns, candidate lists, the inbox. */
  readonly readModel: ReadModel;
  /** The accounts registry (src/accounts/): the database's, whatever account this view reaches. */
  readonly registry: AccountsRegistry;
  /**
   * Where a feature that keeps its own SQL beside its logic (src/destinations/sql.ts) runs it: the
   * database's, whatever account this view reaches. Only such a module takes it.
   */
  readonly featureSql: FeatureSql;

  /**
   * Runs `work` as one bulk load, committed (and made durable) when it resolves, rolled back when
   * it throws. Resolves undefined, having done nothing, when mode 'empty' finds rows. Engines
   * without it (PostgreSQL) take the batched path.
   */
  bulkLoad?<T>(mode: BulkMode, work: (bulk: BulkLoad) => Promise<T>): Promise<T | undefined>;
}

/** The ports behind a handle. Every handle is a `Store` of one of this package's engines. */
export function storePorts(handle: StoreHandle): Store {
  if (typeof (handle as Partial<Store>).write !== 'function') {
    throw new TypeError('Not a store this package opened: pass what openStore returns (or a receiver’s store()).');
  }
  return handle as Store;
}
