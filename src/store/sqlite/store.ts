// The SQLite engine as an assembly of its operation families: each family is plain SQL on the
// statements it prepared (inbox.ts, projection.ts, handlers.ts, reads.ts, settings.ts,
// readiness.ts, bulk.ts), and connection.ts turns them into queued transactions and guarded reads.
import type { BulkLoad, BulkMode, Store, WriteTx } from '../store.js';
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
import { peopleReads } from '../people.js';
import { projectedReads } from '../projected.js';
import { sqliteRegistry } from './registry.js';

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

/** The SQLite engine: one connection, one writer at a time, lock waits that never block the event loop. */
export function createSqliteStore(db: SqliteDatabase, options: SqliteStoreOptions): Store {
  // Lock waits are ours (connection.ts), asynchronous: a busy timeout inside SQLite would block the event loop.
  db.pragma('busy_timeout = 0');
  const connection = openConnection(db, options.busyTimeoutMs);
  const statements = options.readonly ? undefined : prepareStatements(db);
  const writer: Writer | undefined = statements && { transactions: statements.transactions, tx: writeTx(connection, statements) };
  // A read-only store has no statements, and refuses every write before its work runs.
  const inWrite = <T>(work: (s: SqliteStatements) => T): Promise<T> =>
    writeTransaction(connection, writer, () => Promise.resolve(work(statements!)));

  return {
    location: options.location,
    writeConcurrency: 1,
    write: (work, writeOptions) => writeTransaction(connection, writer, work, writeOptions),
    append: (deliveries) => writeTransaction(connection, writer, (tx) => tx.append(deliveries)),
    inboxRow: (id) => read(connection, () => reads.inboxRowById(connection, id)),
    ...sqlitePresence(db, (run) => read(connection, run)),
    counts: () => read(connection, () => reads.counts(connection)),
    hasPending: () => read(connection, () => reads.hasPending(connection)),
    setAside: (afterId, limit) => read(connection, () => reads.setAside(connection, afterId, limit)),
    requeue: (ids) => inWrite((s) => inbox.requeue(s.inbox, ids)),

    claimHandlers: (claim) => inWrite((s) => handlers.claimHandlers(s.handlers, claim)),
    renewHandlerClaims: async (owner, ids, leaseMs) => {
      if (ids.length > 0) await inWrite((s) => handlers.renewHandlerClaims(s.handlers, owner, ids, leaseMs));
    },
    handlersDone: (id) => inWrite((s) => handlers.handlersDone(s.handlers, id)),
    releaseHandlers: async (owner, ids) => {
      if (ids.length > 0) await inWrite((s) => handlers.releaseHandlers(s.handlers, owner, ids));
    },
    recordHandlerFailure: (f) => inWrite((s) => handlers.recordHandlerFailure(s.handlers, f)),
    handlerFailures: (afterId, limit) => read(connection, () => handlers.handlerFailures(connection, afterId, limit)),
    retryHandlerFailures: (ids) => inWrite((s) => handlers.retryHandlerFailures(s.handlers, ids)),

    people: peopleReads(reads.sqliteSql(connection, true)),
    projected: projectedReads(reads.sqliteSql(connection, true)),
    readModel: sqliteReadModel(connection),
    registry: sqliteRegistry(connection, writer),
    setting: (key) => read(connection, () => settings.setting(connection, key)),
    settingOnce: (key, value) => inWrite((s) => settings.settingOnce(connection, s.settings, key, value)),

    probe: () => readiness.probe(connection, writer, statements?.readiness),
    scrub: () => erasure.scrub(connection),
    bulkLoad: <T>(mode: BulkMode, work: (bulk: BulkLoad) => Promise<T>) =>
      loadInBulk(connection, writer, bulkStatements(statements), mode, work),
    flush: () => readiness.flush(connection, writer),
    onWork: () => () => undefined,
    announceWork: () => undefined,
    close: () => readiness.close(connection, options.ownsConnection),
  };
}

/** The operations of one write transaction: each family's, its errors as the store's. */
function writeTx(connection: SqliteConnection, s: SqliteStatements): WriteTx {
  return {
    append: (deliveries) => guard(() => inbox.appendAll(s.inbox, deliveries)),
    known: (identities) => guard(() => inbox.known(s.inbox, identities)),
    appendSettled: (rows, at) => guard(() => inbox.appendAllSettled(s.inbox, rows, at)),
    claimPending: (limit) => guard(() => inbox.claimPending(s.inbox, limit)),
    claimPendingRow: (inboxId) => guard(() => inbox.claimPendingRow(s.inbox, inboxId)),
    lockRows: (keys) => guard(() => projection.lockRows(s.projection, keys)),
    saveRows: (writes) => guard(() => projection.saveRows(s.projection, writes)),
    settle: (settlements, at, options) => guard(() => projection.settle(s.projection, settlements, at, options)),
    resetProjection: () => guard(() => projection.resetProjection(connection.db, s.projection)),
    putSetting: (key, value) => guard(() => settings.putSetting(connection, key, value)),
    erasures: (ids) => guard(() => erasure.erasures(connection, ids)),
    eraseCandidate: (request) => guardAsync(() => erasure.eraseCandidate(connection, request)),
    redactSetAside: (before) => guard(() => erasure.redactSetAside(connection, before)),
    claimErasureHooks: (now, claimUntil, limit) => guard(() => erasure.claimErasureHooks(connection, now, claimUntil, limit)),
    settleErasureHook: (erasureId, settlement) => guard(() => erasure.settleErasureHook(connection, erasureId, settlement)),
  };
}

/** What a bulk load writes with: the inbox's and the projection's statements. */
function bulkStatements(s: SqliteStatements | undefined): BulkStatements {
  // Called only inside the load's transaction, which a read-only store (no statements) refuses first.
  return {
    appendSettled: (row, at) => inbox.appendSettled(s!.inbox, row, at),
    appendRefused: (delivery) => !inbox.append(s!.inbox, delivery).duplicate,
    saveRows: (writes) => projection.saveRows(s!.projection, writes),
  };
}
