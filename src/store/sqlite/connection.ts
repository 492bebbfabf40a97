// One SQLite connection, one writer at a time: write transactions queue on the connection, a
// lock held by another connection is waited for without blocking the event loop, and reads wait
// for the transaction in progress. The operation families (inbox.ts, projection.ts, handlers.ts,
// reads.ts, settings.ts, readiness.ts) are plain SQL; this is where they become transactions.
import { setTimeout as delay } from 'node:timers/promises';
import type { Statement } from 'better-sqlite3';
import { StoreUnavailableError } from '../errors.js';
import type { WriteOptions, WriteTx } from '../write-ports.js';
import type { SqliteDatabase } from './database.js';

export interface SqliteConnection {
  readonly db: SqliteDatabase;
  /** How long a write waits for another connection's lock before giving up (ms). */
  readonly busyTimeoutMs: number;
  /** Statements prepared at their first use (reads, settings): a read-only store prepares no write. */
  readonly preparedOnUse: Map<string, Statement>;
  /**
   * The write transaction in progress. It spans several awaits, and other code's microtasks can
   * run between them: a read waits for it (not for writes still waiting for the lock), so that
   * none runs inside it and sees rows that may yet be rolled back.
   */
  transaction: Promise<void> | undefined;
  /** Write transactions on this connection run one after the other. */
  queue: Promise<unknown>;
  closed: boolean;
  /** `PRAGMA data_version` when the store was made: it changes when another connection commits. */
  readonly dataVersion: number;
  /** The accounts whose changes the transaction in progress recorded: told to `changeListeners` once it commits. */
  readonly changed: Set<string>;
  /** `Store.onChanges`'s listeners. */
  readonly changeListeners: Set<(account: string) => void>;
}

export function openConnection(db: SqliteDatabase, busyTimeoutMs: number): SqliteConnection {
  const dataVersion = db.pragma('data_version', { simple: true }) as number;
  return {
    db,
    busyTimeoutMs,
    preparedOnUse: new Map(),
    transaction: undefined,
    queue: Promise.resolve(),
    closed: false,
    dataVersion,
    changed: new Set(),
    changeListeners: new Set(),
  };
}

/** Whether another connection has committed to the file since the store was made. */
export function writtenByOthers(connection: SqliteConnection): boolean {
  return connection.db.pragma('data_version', { simple: true }) !== connection.dataVersion;
}

/** The statement of this SQL text, prepared at its first use and kept for the connection's life. */
export function prepared(connection: SqliteConnection, sql: string): Statement {
  let statement = connection.preparedOnUse.get(sql);
  if (statement === undefined) {
    statement = connection.db.prepare(sql);
    connection.preparedOnUse.set(sql, statement);
  }
  return statement;
}

// SQLite says "not now" with these: the caller answers 503, or retries later.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL|NOMEM|NOTADB|CORRUPT)/;

/** The error as a StoreUnavailableError when it means "not now" (busy, full, closed...); undefined otherwise. */
export function unavailable(error: unknown): StoreUnavailableError | undefined {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code))
    return new StoreUnavailableError(code, (error as Error).message, { cause: error });
  if (error instanceof TypeError && /database connection is not open/.test(error.message)) {
    return new StoreUnavailableError('CLOSED', 'the database is closed', { cause: error });
  }
  return undefined;
}

/** Runs a synchronous operation as the store's promise, its "not now" errors as StoreUnavailableError. */
export function guard<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(unavailable(error) ?? error);
  }
}

/** `guard` for an operation that awaits between its statements (an erasure reading rows a page at a time). */
export async function guardAsync<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw unavailable(error) ?? error;
  }
}

/** Runs a read once the write transaction in progress, if any, has ended. */
export function read<T>(connection: SqliteConnection, run: () => T): Promise<T> {
  return connection.transaction === undefined ? guard(run) : connection.transaction.then(() => guard(run));
}

/** The statements that open and end a write transaction. */
export interface TransactionStatements {
  begin: Statement;
  commit: Statement;
  synchronousNormal: Statement;
  synchronousFull: Statement;
}

export function prepareTransactions(db: SqliteDatabase): TransactionStatements {
  return {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    synchronousNormal: db.prepare('PRAGMA synchronous = NORMAL'),
    synchronousFull: db.prepare('PRAGMA synchronous = FULL'),
  };
}

/** What a write transaction runs with; a read-only store has none. */
export interface Writer {
  transactions: TransactionStatements;
  tx: WriteTx;
}

/** Runs `job` after the writes queued before it, and before those queued after. */
export function serialised<T>(connection: SqliteConnection, job: () => Promise<T>): Promise<T> {
  const run = connection.queue.then(job);
  connection.queue = run.catch(() => undefined);
  return run;
}

/** `Store.write`: `work` in one write transaction, queued behind the others on this connection. */
export function writeTransaction<T>(
  connection: SqliteConnection,
  writer: Writer | undefined,
  work: (tx: WriteTx) => Promise<T>,
  options: WriteOptions = {},
): Promise<T> {
  // The wait for the lock counts from now, not from this write's turn: a write queued behind one
  // that waits for another connection's lock (a background prune, say) answers in the same time.
  const queued = performance.now();
  return serialised(connection, () =>
    runWrite(connection, writer, work, options, Math.max(0, connection.busyTimeoutMs - (performance.now() - queued))),
  );
}

/** Tells `Store.onChanges`'s listeners which accounts' changes the transaction just committed recorded, after this turn. */
function tellChanged(connection: SqliteConnection): void {
  if (connection.changed.size === 0 || connection.changeListeners.size === 0) return;
  const accounts = [...connection.changed];
  const listeners = [...connection.changeListeners];
  setImmediate(() => {
    for (const account of accounts) for (const listener of listeners) listener(account);
  });
}

/** Takes the write lock, waiting for another connection's up to `waitMs` without blocking the event loop. */
async function begin(statements: TransactionStatements, waitMs: number): Promise<void> {
  const deadline = performance.now() + waitMs;
  for (let wait = 1; ; wait = Math.min(wait * 2, 25)) {
    try {
      statements.begin.run();
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'SQLITE_BUSY' || performance.now() + wait > deadline) throw unavailable(error) ?? error;
    }
    await delay(wait);
  }
}

/** One write transaction, now (the caller queued it): committed when `work` resolves, rolled back when it throws. */
export async function runWrite<T>(
  connection: SqliteConnection,
  writer: Writer | undefined,
  work: (tx: WriteTx) => Promise<T>,
  options: WriteOptions,
  lockWaitMs: number = connection.busyTimeoutMs,
): Promise<T> {
  if (connection.closed) throw new StoreUnavailableError('CLOSED', 'the store is closed');
  if (writer === undefined) throw new Error('this store is read-only');
  const { transactions } = writer;
  // A batch that need not survive a power cut skips its fsync: the next durable commit's fsync
  // persists it with everything before it in the WAL, and if power fails first it is only pending again.
  const relaxed = options.durable === false;
  // The safety level cannot change inside a transaction: it is set before BEGIN and given back
  // after COMMIT. Writes on this connection are serialised by the queue, so nothing else runs
  // with the relaxed level.
  if (relaxed) transactions.synchronousNormal.run();
  try {
    await begin(transactions, lockWaitMs);
    let ended!: () => void;
    connection.transaction = new Promise((resolve) => (ended = resolve));
    try {
      const result = await work(writer.tx);
      transactions.commit.run();
      tellChanged(connection);
      return result;
    } catch (error) {
      if (connection.db.inTransaction) connection.db.exec('ROLLBACK');
      throw error;
    } finally {
      connection.changed.clear();
      connection.transaction = undefined;
      ended();
    }
  } catch (error) {
    throw unavailable(error) ?? error;
  } finally {
    if (relaxed) transactions.synchronousFull.run();
  }
}
