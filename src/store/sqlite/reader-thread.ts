// The reader thread: a read-only connection to the SQLite file, answering the store's own reads
// by name (reader-protocol.ts), so that a long one blocks this thread and never the receiver's
// event loop. WAL lets this connection see every transaction committed by the writer.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { errorShape, lowerPriority } from '../../threads.js';
import type { Store } from '../store.js';
import { unavailable } from './connection.js';
import { isThreadRead, type ReadAnswer, type ReaderThreadData, type ReadRequest } from './reader-protocol.js';
import { createSqliteStore } from './store.js';

const { path, busyTimeoutMs } = workerData as ReaderThreadData;
let store: Store | undefined;

/**
 * The read-only store, opened when the thread starts, beside the main connection: a file moved or
 * deleted later is still read, as the main connection reads it. Opened again at a read if that failed.
 */
function opened(): Store {
  if (store !== undefined) return store;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  store = createSqliteStore(db, { location: `sqlite:${path}`, busyTimeoutMs, ownsConnection: true, readonly: true });
  // Off the event loop, a read may wait for a lock (a checkpoint, another process's recovery) as a write does.
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  return store;
}

lowerPriority();
try {
  opened();
} catch {
  // Said by the first read, as its error.
}

async function answer(request: ReadRequest): Promise<ReadAnswer> {
  try {
    if (!isThreadRead(request.port, request.method))
      throw new TypeError(`the reader thread has no read ${String(request.port)}.${request.method}`);
    const port = opened().forAccount(request.account)[request.port] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    return { id: request.id, ok: true, value: await port[request.method]!(...request.args) };
  } catch (error) {
    return { id: request.id, ok: false, error: errorShape(unavailable(error) ?? error) };
  }
}

/** Sends the answer; a value that cannot be copied back (none of the store's reads gives one) as its error. */
function reply(answer: ReadAnswer): void {
  try {
    parentPort!.postMessage(answer);
  } catch (error) {
    parentPort!.postMessage({ id: answer.id, ok: false, error: errorShape(error) } satisfies ReadAnswer);
  }
}

parentPort!.on('message', (request: ReadRequest) => {
  void answer(request).then(reply);
});
