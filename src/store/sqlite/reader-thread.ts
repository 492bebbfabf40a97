// The reader thread: a read-only connection to the SQLite file, answering the store's own reads
// by name (reader-protocol.ts), so that a long one blocks this thread and never the receiver's
// event loop. WAL lets this connection see every transaction committed by the writer.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { Store } from '../store.js';
import { unavailable } from './connection.js';
import { errorShape, isThreadRead, type ReadAnswer, type ReaderThreadData, type ReadRequest } from './reader-protocol.js';
import { createSqliteStore } from './store.js';

const { path } = workerData as ReaderThreadData;
let store: Store | undefined;

/** The read-only store, opened at the first read (and again after a failed open: the file may come back). */
function opened(): Store {
  if (store !== undefined) return store;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  // The same lock waits as the main connection's reads (none): a locked file answers as it did.
  store = createSqliteStore(db, { location: `sqlite:${path}`, busyTimeoutMs: 0, ownsConnection: true, readonly: true });
  return store;
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

parentPort!.on('message', (request: ReadRequest) => {
  void answer(request).then((reply) => parentPort!.postMessage(reply));
});
