// The SQLite engine as an assembly of its operation families: each family is plain SQL on the
// statements it prepared (inbox.ts, projection.ts, handlers.ts, reads.ts, settings.ts,
// readiness.ts, bulk.ts), and connection.ts turns them into queued transactions and guarded reads.
import type { BulkLoad, BulkMode, WriteTx } from '../write-ports.js';
import type { Store } from '../store.js';
import { loadInBulk, type BulkStatements } from './bulk.js';
import {
  guard,
  guardAsync,
  openConnection,
  prepareTransactions,
  read,
  writeTransaction,
  type SqliteConnection,
  type TransactionStatements,
  type Writer,
} from './connection.js';
import type { SqliteDatabase } from './database.js';
import * as handlers from './handlers.js';
import * as inbox from './inbox.js';
import * as projection from './projection.js';
import * as readiness from './readiness.js';
import * as reads from './reads.js';
import { sqliteReadModel } from './read-model.js';
import { sqlitePresence } from './presence.js';
import * as settings from './settings.js';
import * as erasure from './erasure.js';
import * as accounts from './accounts.js';
import * as counters from './counters.js';
import * as changes from './changes.js';
import { DEFAULT_ACCOUNT } from '../../receive/account.js';
import { peopleReads } from '../people.js';
import { projectedReads } from '../projected.js';
import { sqliteRegistry } from './registry.js';
import { sqliteFeatureSql } from './feature-sql.js';
import type { ConnectionRecipe } from '../feature-sql.js';
import { closeReaderThread, readerThread, readsSettled, threadReads, type ReaderThread } from './off-loop-reads.js';

export interface SqliteStoreOptions {
  /** For logs: where the file is. */
  location: string;
  /** How long a write waits for another connection's lock before giving up (ms); waited without blocking. */
  busyTimeoutMs: number;
  /** Close the connection with the store (the store opened it). */
  ownsConnection: boolean;
  readonly?: boolean;
}

/** Every write statement of the engine, prepared once when the store is made, by family. */
interface SqliteStatements {
  transactions: TransactionStatements;
  inbox: inbox.InboxStatements;
  projection: projection.ProjectionStatements;
  handlers: handlers.HandlerStatements;
  settings: settings.SettingStatements;
  readiness: readiness.ReadinessStatements;
}

function prepareStatements(db: SqliteDatabase): SqliteStatements {
  return {
    transactions: prepareTransactions(db),
    inbox: inbox.prepareInbox(db),
    projection: projection.prepareProjection(db),
    handlers: handlers.prepareHandlers(db),
    settings: settings.prepareSettings(db),
    readiness: readiness.prepareReadiness(db),
  };
}

/** What every account's view shares: the connection, its statements and the cache of views. */
interface SqliteEngine {
  connection: SqliteConnection;
  statements: SqliteStatements | undefined;
  options: SqliteStoreOptions;
  views: Map<string, Store>;
  /** Where the read model and the people reads run, off the event loop; none for a read-only store or one in memory. */
  reader: ReaderThread | undefined;
  /** How another thread opens the file (a feature's reads off the event loop); none in memory or without WAL. */
  elsewhere: ConnectionRecipe | undefined;
}

/**
 * The SQLite engine: one connection, one writer at a time, lock waits that never block the event
 * loop. The store returned is the default account's view; `forAccount` gives the others, over the
 * same connection and statements (each binds the account as a parameter).
 */
export function createSqliteStore(db: SqliteDatabase, options: SqliteStoreOptions): Store {
  // Lock waits are ours (connection.ts), asynchronous: a busy timeout inside SQLite would block the event loop.
  db.pragma('busy_timeout = 0');
  const connection = openConnection(db, options.busyTimeoutMs);
  const statements = options.readonly ? undefined : prepareStatements(db);
  // A read-only store serves a command (inspect), not an intake: its reads stay on its connection.
  // Without WAL a writer's commit would block the thread's reads: they stay on the connection too.
  const wal = !options.readonly && !db.memory && db.pragma('journal_mode', { simple: true }) === 'wal';
  const reader = wal ? readerThread({ path: db.name, busyTimeoutMs: options.busyTimeoutMs }) : undefined;
  // A file in WAL: another thread's connection sees every commit of this one, and never blocks it.
  const elsewhere = wal ? { database: db.name, options: { busyTimeoutMs: options.busyTimeoutMs } } : undefined;
  return accountView({ connection, statements, options, views: new Map(), reader, elsewhere }, DEFAULT_ACCOUNT);
}

/** The store of one account, made once and cached. */
function accountView(engine: SqliteEngine, account: string): Store {
  const cached = engine.views.get(account);
  if (cached !== undefined) return cached;
  // Which accounts exist is the caller's to know (the registry): a view of an unknown one reads nothing.
  if (typeof account !== 'string') throw new TypeError('an account is a string');
  const { connection, statements, options, reader } = engine;
  const writer: Writer | undefined = statements && { transactions: statements.transactions, tx: writeTx(connection, statements, account) };
  // A read-only store has no statements, and refuses every write before its work runs.
  const inWrite = <T>(work: (s: SqliteStatements) => T): Promise<T> =>
    writeTransaction(connection, writer, () => Promise.resolve(work(statements!)));

  const view: Store = {
    account,
    forAccount: (other) => accountView(engine, other),
    accountsWithWork: () => read(connection, () => accounts.accountsWithWork(connection)),
    location: options.location,
    writeConcurrency: 1,
    write: (work, writeOptions) => writeTransaction(connection, writer, work, writeOptions),
    append: (deliveries) => writeTransaction(connection, writer, (tx) => tx.append(deliveries)),
    inboxRow: (id) => read(connection, () => reads.inboxRowById(connection, id)),
    ...sqlitePresence(connection.db, (run) => read(connection, run)),
    counts: () => read(connection, () => counters.counts(connection, account)),
    hasPending: () => read(connection, () => reads.hasPending(connection, account)),
    setAside: (afterId, limit) => read(connection, () => reads.setAside(connection, account, afterId, limit)),
    requeue: (ids) => inWrite((s) => inbox.requeue(s.inbox, account, ids)),
    changesAfter: (after, limit, maxBytes) => read(connection, () => changes.changesAfter(connection, account, after, limit, maxBytes)),
    pruneChanges: (before, limit) => writeTransaction(connection, writer, () => changes.pruneChanges(connection, before, limit)),
    ...handlerClaims(connection, inWrite, account),
    ...operatorReads(connection, reader, account),
    projected: projectedReads(reads.sqliteSql(connection, true), account),
    registry: sqliteRegistry(connection, writer),
    featureSql: sqliteFeatureSql(connection, writer, engine.elsewhere),
    setting: (key) => read(connection, () => settings.setting(connection, key)),
    settingOnce: (key, value) => inWrite((s) => settings.settingOnce(connection, s.settings, key, value)),

    probe: () => readiness.probe(connection, writer, statements?.readiness),
    // The reader thread's reads in flight first: each holds the snapshot the checkpoint must pass.
    scrub: async () => {
      if (reader !== undefined) await readsSettled(reader);
      return await erasure.scrub(connection);
    },
    bulkLoad: <T>(mode: BulkMode, work: (bulk: BulkLoad) => Promise<T>) =>
      loadInBulk(connection, writer, bulkStatements(connection, statements, account), mode, work),
    flush: () => readiness.flush(connection, writer),
    onWork: () => () => undefined,
    announceWork: () => undefined,
    onChanges: (listener) => {
      connection.changeListeners.add(listener);
      return () => connection.changeListeners.delete(listener);
    },
    close: async () => {
      if (reader !== undefined) await closeReaderThread(reader);
      await readiness.close(connection, options.ownsConnection);
    },
  };
  engine.views.set(account, view);
  return view;
}

/** The read model and the people reads of one account: on the connection, or in the reader thread where there is one. */
function operatorReads(
  connection: SqliteConnection,
  reader: ReaderThread | undefined,
  account: string,
): Pick<Store, 'readModel' | 'people'> {
  const own = { people: peopleReads(reads.sqliteSql(connection, true), account), readModel: sqliteReadModel(connection, account) };
  return reader === undefined ? own : threadReads(reader, account, own);
}

type InWrite = <T>(work: (s: SqliteStatements) => T) => Promise<T>;

/** The handler pump's claims and the dead letters' handler failures, of one account (leases by inbox id). */
function handlerClaims(
  connection: SqliteConnection,
  inWrite: InWrite,
  account: string,
): Pick<
  Store,
  | 'claimHandlers'
  | 'renewHandlerClaims'
  | 'handlersDone'
  | 'releaseHandlers'
  | 'recordHandlerFailure'
  | 'handlerFailures'
  | 'retryHandlerFailures'
> {
  return {
    claimHandlers: (claim) => inWrite((s) => handlers.claimHandlers(s.handlers, account, claim)),
    renewHandlerClaims: async (owner, ids, leaseMs) => {
      if (ids.length > 0) await inWrite((s) => handlers.renewHandlerClaims(s.handlers, owner, ids, leaseMs));
    },
    handlersDone: (id) => inWrite((s) => handlers.handlersDone(s.handlers, id)),
    releaseHandlers: async (owner, ids) => {
      if (ids.length > 0) await inWrite((s) => handlers.releaseHandlers(s.handlers, owner, ids));
    },
    recordHandlerFailure: (f) => inWrite((s) => handlers.recordHandlerFailure(s.handlers, f)),
    handlerFailures: (afterId, limit) => read(connection, () => handlers.handlerFailures(connection, account, afterId, limit)),
    retryHandlerFailures: (ids) => inWrite((s) => handlers.retryHandlerFailures(s.handlers, account, ids)),
  };
}

/** The operations of one write transaction of one account: each family's, its errors as the store's. */
function writeTx(connection: SqliteConnection, s: SqliteStatements, account: string): WriteTx {
  return {
    account,
    append: (deliveries) => guard(() => inbox.appendAll(s.inbox, deliveries)),
    known: (identities) => guard(() => inbox.known(s.inbox, account, identities)),
    appendSettled: (rows, at) => guard(() => inbox.appendAllSettled(s.inbox, rows, at)),
    claimPending: (limit) => guard(() => inbox.claimPending(s.inbox, account, limit)),
    claimPendingRow: (inboxId) => guard(() => inbox.claimPendingRow(s.inbox, inboxId)),
    lockRows: (keys) => guard(() => projection.lockRows(s.projection, account, keys)),
    saveRows: (writes) => guard(() => projection.saveRows(s.projection, account, writes)),
    recordChanges: (records) => guard(() => changes.recordChanges(connection, account, records, new Date().toISOString())),
    settle: (settlements, at, options) => guard(() => projection.settle(s.projection, settlements, at, options)),
    resetProjection: () =>
      guardAsync(() => changes.startRebuild(connection, account, () => projection.resetProjection(s.projection, account))),
    finishRebuild: () => guardAsync(() => changes.finishRebuild(connection, account)),
    putSetting: (key, value) => guard(() => settings.putSetting(connection, key, value)),
    erasures: (ids) => guard(() => erasure.erasures(connection, account, ids)),
    eraseCandidate: (request) => guardAsync(() => erasure.eraseCandidate(connection, account, request)),
    redactSetAside: (before) => guard(() => erasure.redactSetAside(connection, account, before)),
    claimErasureHooks: (now, claimUntil, limit) => guard(() => erasure.claimErasureHooks(connection, now, claimUntil, limit)),
    settleErasureHook: (erasureId, settlement) => guard(() => erasure.settleErasureHook(connection, erasureId, settlement)),
    deleteAccountRows: () => guard(() => accounts.deleteAccountRows(connection, account)),
  };
}

/** What a bulk load of one account writes with: the inbox's and the projection's statements. */
function bulkStatements(connection: SqliteConnection, s: SqliteStatements | undefined, account: string): BulkStatements {
  // Called only inside the load's transaction, which a read-only store (no statements) refuses first.
  return {
    account,
    appendSettled: (row, at, body) => inbox.appendSettled(s!.inbox, row, at, body),
    appendRefused: (delivery, body) => !inbox.append(s!.inbox, delivery, body).duplicate,
    saveRows: (writes) => projection.saveRows(s!.projection, account, writes),
    recordChanges: (records) => changes.recordChanges(connection, account, records, new Date().toISOString()),
    startRebuild: (empty) => changes.startRebuild(connection, account, empty),
    finishRebuild: () => changes.finishRebuild(connection, account),
  };
}
