// A SQLite store whose connection lives in a worker thread (thread-worker.ts): the same store,
// the same transactions, but every statement, commit and fsync runs off the event loop, so a
// slow disk or a long commit never holds up the requests of the process.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Delivery } from '../../receive/delivery.js';
import { StoreUnavailableError, type Store, type WriteOptions, type WriteTx } from '../store.js';
import { reviveError, withBuffers, type Reply, type Request, type WorkerSetup } from './thread-protocol.js';

/** The worker's entry: beside this module once built; the built one when running from sources (tests). */
function workerEntry(): string | undefined {
  const entry = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../../dist/store/sqlite/thread-worker.js' : './thread-worker.js', import.meta.url));
  return existsSync(entry) ? entry : undefined;
}

/** Whether a threaded store can be made here (the worker's built entry exists). */
export function threadedStoreAvailable(): boolean {
  return workerEntry() !== undefined;
}

/** Tests reach the worker through this key, to stop it as a crash would. */
export const WORKER = Symbol('prequal-hooks sqlite worker');

type Unsent = Request extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

const STORE_CALLS = [
  'inboxRow', 'counts', 'hasPending', 'setAside', 'requeue', 'claimHandlers', 'renewHandlerClaims', 'handlersDone',
  'releaseHandlers', 'recordHandlerFailure', 'handlerFailures', 'retryHandlerFailures', 'select', 'setting', 'settingOnce',
  'flush', 'probe', 'beat', 'receivers', 'forgetReceivers', 'scrub',
] as const;
const TX_CALLS = ['append', 'known', 'appendSettled', 'claimPending', 'claimPendingRow', 'lockRows', 'saveRows', 'settle', 'resetProjection', 'putSetting', 'erasures', 'eraseCandidate', 'redactSetAside', 'claimErasureHooks', 'settleErasureHook'] as const;

/** The main thread's end of the worker: the worker running (if any), and the replies it owes. */
interface WorkerLink {
  readonly entry: string;
  readonly setup: WorkerSetup;
  worker: Worker | undefined;
  nextId: number;
  nextTx: number;
  closed: boolean;
  readonly pending: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
}

/**
 * Opens the store's worker on a database already created and migrated (the caller opened it
 * once on this thread, so that a bad path or a newer schema throws at once). A worker that dies
 * fails what it had in hand with StoreUnavailableError (503s) and is started again at the next call.
 */
export function createThreadedSqliteStore(setup: WorkerSetup): Store {
  const entry = workerEntry();
  if (entry === undefined) throw new Error('the SQLite worker is not built (npm run build)');
  const link: WorkerLink = { entry, setup, worker: undefined, nextId: 1, nextTx: 1, closed: false, pending: new Map() };
  const store = {
    location: setup.location,
    writeConcurrency: 1,
    write: <T>(work: (tx: WriteTx) => Promise<T>, options: WriteOptions = {}) => write(link, work, options),
    append: (deliveries: readonly Delivery[]) => write(link, (tx) => tx.append(deliveries), {}),
    onWork: () => () => undefined,
    announceWork: () => undefined,
    close: () => close(link),
  } as Partial<Store> as Record<string, unknown>;
  for (const method of STORE_CALLS) store[method] = (...args: unknown[]) => send(link, { op: 'call', method, args });
  Object.defineProperty(store, WORKER, { value: () => link.worker });
  return store as unknown as Store;
}

function start(link: WorkerLink): Worker {
  const started = new Worker(link.entry, { workerData: link.setup });
  started.unref();
  started.on('message', (reply: Reply) => {
    const waiting = link.pending.get(reply.id);
    if (waiting === undefined) return;
    link.pending.delete(reply.id);
    if (link.pending.size === 0) started.unref();
    if (reply.ok) waiting.resolve(withBuffers(reply.value));
    else waiting.reject(reviveError(reply.error));
  });
  const lost = (why: string) => {
    if (link.worker !== started) return;
    link.worker = undefined;
    const failure = new StoreUnavailableError('STORE_WORKER_EXITED', `the SQLite worker stopped (${why}); it restarts at the next write`);
    for (const waiting of link.pending.values()) waiting.reject(failure);
    link.pending.clear();
  };
  started.on('error', (error) => lost(error.message));
  started.on('exit', (code) => lost(`exit code ${code}`));
  return started;
}

/** Sends to the running worker (started if needed), or only to `to`: a transaction's own worker. */
function send(link: WorkerLink, request: Unsent, to?: Worker): Promise<unknown> {
  if (link.closed) return Promise.reject(new StoreUnavailableError('CLOSED', 'the store is closed'));
  if (to !== undefined && to !== link.worker) {
    return Promise.reject(new StoreUnavailableError('STORE_WORKER_EXITED', 'the SQLite worker stopped during this transaction; nothing of it was committed'));
  }
  link.worker ??= start(link);
  const id = link.nextId++;
  const target = link.worker;
  return new Promise((resolve, reject) => {
    link.pending.set(id, { resolve, reject });
    // The process stays alive while the worker has work in hand, and only then.
    target.ref();
    target.postMessage({ ...request, id } as Request);
  });
}

async function write<T>(link: WorkerLink, work: (tx: WriteTx) => Promise<T>, options: WriteOptions): Promise<T> {
  const tx = link.nextTx++;
  if (link.closed) throw new StoreUnavailableError('CLOSED', 'the store is closed');
  // Every step of the transaction goes to the worker that began it, or fails.
  const own = (link.worker ??= start(link));
  await send(link, { op: 'begin', tx, options: { ...(options.durable !== undefined && { durable: options.durable }) } }, own);
  const remote = Object.fromEntries(TX_CALLS.map((method) => [method, (...args: unknown[]) => send(link, { op: 'tx', tx, method, args }, own)])) as unknown as WriteTx;
  let result: T;
  try {
    result = await work(remote);
  } catch (error) {
    await send(link, { op: 'end', tx, commit: false }, own).catch(() => undefined);
    throw error;
  }
  await send(link, { op: 'end', tx, commit: true }, own);
  return result;
}

async function close(link: WorkerLink): Promise<void> {
  if (link.closed || link.worker === undefined) {
    link.closed = true;
    return;
  }
  const closing = link.worker;
  await send(link, { op: 'call', method: 'close', args: [] }).catch(() => undefined);
  link.closed = true;
  await closing.terminate().catch(() => undefined);
}
