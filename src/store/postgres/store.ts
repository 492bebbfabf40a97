// The PostgreSQL engine: the operation families of this folder assembled into a `Store`. The
// families hold the SQL; this file only wires them to one pool and one work channel.
import type { Logger } from 'pino';
import type { Store, WriteTx } from '../store.js';
import { claimHandlers, claimPending, claimPendingRow, releaseHandlers, renewHandlerClaims, settle } from './claims.js';
import { typeParsers, type Pool } from './connection.js';
import { requeue, setAside } from './dead-letters.js';
import { handlerFailures, handlersDone, recordHandlerFailure, retryHandlerFailures } from './handlers.js';
import { appendDeliveries, appendSettled, knownIdentities } from './intake.js';
import { lockRows, resetProjection, saveRows } from './projection.js';
import { counts, hasPending, inboxRow, postgresSql } from './reads.js';
import { peopleReads } from '../people.js';
import { projectedReads } from '../projected.js';
import { postgresReadModel } from './read-model.js';
import { flush, prepareSchema, probe } from './readiness.js';
import { createEngine, inTransaction, query, type Engine, type Session } from './session.js';
import { postgresPresence } from './presence.js';
import { postgresRegistry } from './registry.js';
import { putSetting, setting, settingOnce } from './settings.js';
import * as erasure from './erasure.js';
import { announceWork, createWorkChannel, onWork, stopListening, type WorkChannel } from './work-channel.js';

export interface PostgresStoreOptions {
  /** For logs: the URL without its password. */
  location: string;
  /** Whether the store made the pool (then it ends it on close). */
  ownsPool: boolean;
  /** The schema the pool's search_path names, created at the first start when given. */
  schema?: string;
  /** Check the schema instead of migrating it (read-only commands). */
  readonly?: boolean;
  /** false: refuse a schema that needs migrations (MigrationsPendingError) instead of applying them. */
  migrate?: boolean;
  logger?: Pick<Logger, 'warn' | 'error'>;
}

/** Opens the PostgreSQL engine on a pool: migrates (once across replicas), checks durability settings. */
export async function createPostgresStore(pool: Pool, options: PostgresStoreOptions): Promise<Store> {
  const engine = createEngine(pool, await typeParsers());
  await prepareSchema(engine, options);
  const db = engine.pooled;
  const work = createWorkChannel(engine);
  return {
    location: options.location,
    // Leave connections for projection, handlers, reads and the listener.
    writeConcurrency: Math.max(1, Math.floor(((pool as { options?: { max?: number } }).options?.max ?? 10) / 2)),
    write: (run, writeOptions) => inTransaction(engine, (tx) => run(writeTx(tx)), writeOptions),
    // One INSERT is its own transaction: committed (synchronous_commit on) when it returns.
    append: (deliveries) => appendDeliveries(engine.pooled, deliveries),
    inboxRow: (id) => inboxRow(db, id),
    counts: () => counts(db),
    hasPending: () => hasPending(db),
    setAside: (afterId, limit) => setAside(db, afterId, limit),
    async requeue(ids) {
      const result = await requeue(db, ids);
      if (result.requeued.length > 0) announceWork(work);
      return result;
    },
    claimHandlers: (claim) => claimHandlers(db, claim),
    renewHandlerClaims: (owner, ids, leaseMs) => renewHandlerClaims(db, owner, ids, leaseMs),
    handlersDone: (id) => handlersDone(db, id),
    releaseHandlers: (owner, ids) => releaseHandlers(db, owner, ids),
    recordHandlerFailure: (failure) => recordHandlerFailure(db, failure),
    handlerFailures: (afterId, limit) => handlerFailures(db, afterId, limit),
    retryHandlerFailures: (ids) => retryHandlerFailures(engine, ids),
    people: peopleReads(postgresSql(db)),
    projected: projectedReads(postgresSql(db)),
    readModel: postgresReadModel(db),
    registry: postgresRegistry(engine),
    ...postgresPresence((text, values) => query(db, text, values)),
    setting: (key) => setting(db, key),
    settingOnce: (key, value) => settingOnce(db, key, value),
    probe: () => probe(engine),
    scrub: () => erasure.scrub(engine),
    flush: () => flush(engine),
    onWork: (callback) => onWork(work, callback),
    announceWork: () => announceWork(work),
    close: () => close(engine, work, options.ownsPool),
  };
}

/** The work of one write transaction, each operation on its client. */
function writeTx(tx: Session): WriteTx {
  return {
    append: (deliveries) => appendDeliveries(tx, deliveries),
    known: (identities) => knownIdentities(tx, identities),
    appendSettled: (rows, at) => appendSettled(tx, rows, at),
    claimPending: (limit) => claimPending(tx, limit),
    claimPendingRow: (inboxId) => claimPendingRow(tx, inboxId),
    lockRows: (keys) => lockRows(tx, keys),
    saveRows: (writes) => saveRows(tx, writes),
    resetProjection: () => resetProjection(tx),
    putSetting: (key, value) => putSetting(tx, key, value),
    erasures: (ids) => erasure.erasures(tx, ids),
    eraseCandidate: (request) => erasure.eraseCandidate(tx, request),
    redactSetAside: (before) => erasure.redactSetAside(tx, before),
    claimErasureHooks: (now, claimUntil, limit) => erasure.claimErasureHooks(tx, now, claimUntil, limit),
    settleErasureHook: (erasureId, settlement) => erasure.settleErasureHook(tx, erasureId, settlement),
    settle: (settlements, at, settleOptions) => settle(tx, settlements, at, settleOptions),
  };
}

async function close(engine: Engine, work: WorkChannel, ownsPool: boolean): Promise<void> {
  if (engine.closed) return;
  engine.closed = true;
  stopListening(work);
  if (ownsPool) await engine.pool.end().catch(() => undefined);
}
