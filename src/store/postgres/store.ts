// The PostgreSQL engine: the operation families of this folder assembled into a `Store`. The
// families hold the SQL; this file only wires them to one pool and one work channel, and scopes
// each view to its account (docs/projection.md section 9): one view per account, made once, every
// one on the same pool, each passing its account to the statements it runs.
import type { Logger } from 'pino';
import { DEFAULT_ACCOUNT } from '../../receive/account.js';
import type { Store } from '../store.js';
import type { WriteTx } from '../write-ports.js';
import { accountsWithWork, deleteAccountRows } from './accounts.js';
import { claimHandlers, claimPending, claimPendingRow, releaseHandlers, renewHandlerClaims, settle } from './claims.js';
import { typeParsers, type Pool } from './connection.js';
import { requeue, setAside } from './dead-letters.js';
import { handlerFailures, handlersDone, recordHandlerFailure, retryHandlerFailures } from './handlers.js';
import { appendDeliveries, appendSettled, knownIdentities } from './intake.js';
import { lockRows, resetProjection, saveRows } from './projection.js';
import { changesAfter, finishRebuild, pruneChanges, recordChanges, startRebuild } from './changes.js';
import { hasPending, inboxRow, postgresSql } from './reads.js';
import { counts } from './counters.js';
import { peopleReads } from '../people.js';
import { projectedReads } from '../projected.js';
import { postgresReadModel } from './read-model.js';
import { gatedReads, readGate, type ReadGate } from './operator-reads.js';
import { flush, prepareSchema, probe } from './readiness.js';
import { createEngine, inTransaction, query, type Engine, type Session } from './session.js';
import { postgresPresence } from './presence.js';
import { postgresRegistry } from './registry.js';
import { postgresFeatureSql } from './feature-sql.js';
import { putSetting, setting, settingOnce } from './settings.js';
import * as erasure from './erasure.js';
import { announceWork, createWorkChannel, onChanges, onWork, stopListening, type WorkChannel } from './work-channel.js';

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
  /** The URL it was opened from (its password too): another thread opens its own pool with it. None for a pool given. */
  url?: string;
}

/** What every account's view shares: the pool, the work channel, the long reads' gate, the views made so far. */
interface Shared {
  engine: Engine;
  work: WorkChannel;
  reads: ReadGate;
  options: PostgresStoreOptions;
  views: Map<string, Store>;
}

/** Opens the PostgreSQL engine on a pool: migrates (once across replicas), checks durability settings; the default account's view. */
export async function createPostgresStore(pool: Pool, options: PostgresStoreOptions): Promise<Store> {
  const engine = createEngine(pool, await typeParsers());
  await prepareSchema(engine, options);
  return viewOf({ engine, work: createWorkChannel(engine), reads: operatorReadGate(pool), options, views: new Map() }, DEFAULT_ACCOUNT);
}

/** The pool's settings we size by: those of a pool we made, or of one given (then pg's defaults where it has none). */
function poolSettings(pool: Pool): { max: number; connectionTimeoutMillis: number } {
  const options = (pool as { options?: { max?: number; connectionTimeoutMillis?: number } }).options;
  return { max: options?.max ?? 10, connectionTimeoutMillis: options?.connectionTimeoutMillis ?? 0 };
}

/**
 * Long operator reads take at most a fifth of the pool (2 of the default 10): the intake's writers
 * (half of it), the projection, the handlers and the listener keep the rest. A read waits for its
 * turn as long as for a connection (4 s by default, 10 s for a given pool without a limit).
 */
function operatorReadGate(pool: Pool): ReadGate {
  const { max, connectionTimeoutMillis } = poolSettings(pool);
  return readGate(Math.floor(max / 5), connectionTimeoutMillis > 0 ? connectionTimeoutMillis : 10_000);
}

/** The account's view, made at its first use. */
function viewOf(shared: Shared, account: string): Store {
  let view = shared.views.get(account);
  if (view === undefined) {
    view = { ...databaseWide(shared), ...accountView(shared, account) };
    shared.views.set(account, view);
  }
  return view;
}

/** What reaches the account's rows only, or rows by inbox id. */
function accountView(shared: Shared, account: string): Omit<Store, keyof ReturnType<typeof databaseWide>> {
  const { engine, work, reads } = shared;
  const db = engine.pooled;
  return {
    account,
    forAccount: (other) => viewOf(shared, other),
    write: (run, writeOptions) => inTransaction(engine, (tx) => run(writeTx(tx, account)), writeOptions),
    counts: () => counts(db, account),
    hasPending: () => hasPending(db, account),
    setAside: (afterId, limit) => setAside(db, account, afterId, limit),
    async requeue(ids) {
      const result = await requeue(db, account, ids);
      if (result.requeued.length > 0) announceWork(work);
      return result;
    },
    claimHandlers: (claim) => claimHandlers(db, account, claim),
    handlerFailures: (afterId, limit) => handlerFailures(db, account, afterId, limit),
    retryHandlerFailures: (ids) => retryHandlerFailures(engine, account, ids),
    ...gatedReads(reads, { people: peopleReads(postgresSql(db), account), readModel: postgresReadModel(db, account) }),
    projected: projectedReads(postgresSql(db), account),
    changesAfter: (after, limit, maxBytes) => changesAfter(db, account, after, limit, maxBytes),
  };
}

/** What every view shares: the database's own (settings, presence, lifecycle) and what is done by inbox id. */
function databaseWide({ engine, work, options }: Shared) {
  const db = engine.pooled;
  return {
    location: options.location,
    // Leave connections for projection, handlers, reads and the listener.
    writeConcurrency: Math.max(1, Math.floor(poolSettings(engine.pool).max / 2)),
    // One INSERT is its own transaction: committed (synchronous_commit on) when it returns.
    append: (deliveries) => appendDeliveries(db, deliveries),
    inboxRow: (id) => inboxRow(db, id),
    pruneChanges: (before, limit) => inTransaction(engine, (tx) => pruneChanges(tx, before, limit)),
    renewHandlerClaims: (owner, ids, leaseMs) => renewHandlerClaims(db, owner, ids, leaseMs),
    handlersDone: (id) => handlersDone(db, id),
    releaseHandlers: (owner, ids) => releaseHandlers(db, owner, ids),
    recordHandlerFailure: (failure) => recordHandlerFailure(db, failure),
    accountsWithWork: () => accountsWithWork(db),
    registry: postgresRegistry(engine),
    featureSql: postgresFeatureSql(
      engine,
      options.url === undefined
        ? undefined
        : { database: options.url, options: { ...(options.schema !== undefined && { schema: options.schema }) } },
    ),
    ...postgresPresence((text, values) => query(db, text, values)),
    setting: (key) => setting(db, key),
    settingOnce: (key, value) => settingOnce(db, key, value),
    probe: () => probe(engine),
    scrub: () => erasure.scrub(engine),
    flush: () => flush(engine),
    onWork: (callback) => onWork(work, callback),
    announceWork: () => announceWork(work),
    onChanges: (callback) => onChanges(work, callback),
    close: () => close(engine, work, options.ownsPool),
  } satisfies Partial<Store>;
}

/** The work of one write transaction of the account's view, each operation on its client. */
function writeTx(tx: Session, account: string): WriteTx {
  return {
    account,
    append: (deliveries) => appendDeliveries(tx, deliveries),
    known: (identities) => knownIdentities(tx, account, identities),
    appendSettled: (rows, at) => appendSettled(tx, rows, at),
    claimPending: (limit) => claimPending(tx, account, limit),
    claimPendingRow: (inboxId) => claimPendingRow(tx, inboxId),
    lockRows: (keys) => lockRows(tx, account, keys),
    saveRows: (writes) => saveRows(tx, account, writes),
    recordChanges: (records) => recordChanges(tx, account, records),
    resetProjection: () => startRebuild(tx, account, () => resetProjection(tx, account)),
    finishRebuild: () => finishRebuild(tx, account),
    putSetting: (key, value) => putSetting(tx, key, value),
    erasures: (ids) => erasure.erasures(tx, account, ids),
    eraseCandidate: (request) => erasure.eraseCandidate(tx, account, request),
    redactSetAside: (before) => erasure.redactSetAside(tx, account, before),
    claimErasureHooks: (now, claimUntil, limit) => erasure.claimErasureHooks(tx, now, claimUntil, limit),
    settleErasureHook: (erasureId, settlement) => erasure.settleErasureHook(tx, erasureId, settlement),
    deleteAccountRows: () => deleteAccountRows(tx, account),
    settle: (settlements, at, settleOptions) => settle(tx, settlements, at, settleOptions),
  };
}

async function close(engine: Engine, work: WorkChannel, ownsPool: boolean): Promise<void> {
  if (engine.closed) return;
  engine.closed = true;
  stopListening(work);
  if (ownsPool) await engine.pool.end().catch(() => undefined);
}
