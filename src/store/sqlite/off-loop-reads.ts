// Operator reads off the event loop. better-sqlite3 runs a query synchronously, so a console
// search or list over millions of rows would hold every webhook until it ends. The read model and
// the people reads of a store on a file go instead to a thread (reader-thread.ts) with its own
// read-only connection, which WAL lets see every committed transaction; the main connection keeps
// the writes, the intake's reads and the reads by key, which an index bounds.
import { Worker } from 'node:worker_threads';
import { withDeadline } from '../../deadline.js';
import { errorShape, threadModule } from '../../threads.js';
import { withLongReads, type OperatorPort, type OperatorReads } from '../long-reads.js';
import { StoreUnavailableError } from '../errors.js';
import { errorOf, type ReadAnswer, type ReaderThreadData, type ReadRequest } from './reader-protocol.js';

/** A read longer than this is given up (a 503) and its thread replaced: no page waits forever. */
const READ_TIMEOUT_MS = 60_000;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** The thread's life: started with the store, stopped by a timeout or a crash (started again by the next read), or closed. */
type ThreadLife = { state: 'idle' } | Running | { state: 'closed' };

interface Running {
  state: 'running';
  worker: Worker;
  pending: Map<number, Pending>;
  /** Told when no read is in flight any more. */
  idle: Array<() => void>;
}

export interface ReaderThread {
  readonly module: URL;
  readonly data: ReaderThreadData;
  readonly timeoutMs: number;
  life: ThreadLife;
  nextId: number;
}

/**
 * A reader thread for the file at `path`, started now so that its connection opens the file the
 * main one has; undefined when it cannot run here.
 */
export function readerThread(data: ReaderThreadData, timeoutMs = READ_TIMEOUT_MS): ReaderThread | undefined {
  const module = threadModule(import.meta.url, 'reader-thread.js');
  if (module === undefined) return undefined;
  const thread: ReaderThread = { module, data, timeoutMs, life: { state: 'idle' }, nextId: 1 };
  start(thread);
  return thread;
}

function start(thread: ReaderThread): Running {
  const worker = new Worker(thread.module, { workerData: thread.data, stdout: false, stderr: false });
  const life: Running = { state: 'running', worker, pending: new Map(), idle: [] };
  worker.on('message', (answer: ReadAnswer) => settle(life, answer));
  worker.on('error', (error) =>
    stop(thread, life, new StoreUnavailableError('READER_FAILED', `the reader thread failed: ${error.message}`)),
  );
  worker.on('exit', () => stop(thread, life, new StoreUnavailableError('READER_EXITED', 'the reader thread exited')));
  // Only a read in flight keeps the process alive: an idle thread never holds its exit.
  worker.unref();
  thread.life = life;
  return life;
}

function settle(life: Running, answer: ReadAnswer): void {
  const pending = life.pending.get(answer.id);
  if (pending === undefined) return;
  life.pending.delete(answer.id);
  clearTimeout(pending.timer);
  if (life.pending.size === 0) idle(life);
  if (answer.ok) pending.resolve(withBuffers(answer.value));
  else pending.reject(errorOf(answer.error));
}

/** Bytes as the main connection gives them (a Buffer), where the copy across threads made them a plain Uint8Array. */
function buffer<T>(value: T): T {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? (Buffer.from(value.buffer, value.byteOffset, value.byteLength) as T)
    : value;
}

/** A read's value with the bytes of its rows (a row, or a list of rows) as Buffers. */
function withBuffers(value: unknown): unknown {
  const row = (r: unknown) => {
    if (typeof r !== 'object' || r === null || Object.getPrototypeOf(r) !== Object.prototype) return buffer(r);
    for (const [key, field] of Object.entries(r)) if (field instanceof Uint8Array) (r as Record<string, unknown>)[key] = buffer(field);
    return r;
  };
  return Array.isArray(value) ? value.map(row) : row(value);
}

/** No read in flight: the thread no longer holds the process, and those waiting for this are told. */
function idle(life: Running): void {
  life.worker.unref();
  for (const tell of life.idle.splice(0)) tell();
}

/**
 * Resolves once no read is in flight. A read holds its snapshot of the file while it runs, and
 * an erasure's checkpoint cannot empty the WAL under it.
 */
export function readsSettled(thread: ReaderThread): Promise<void> {
  const life = thread.life;
  if (life.state !== 'running' || life.pending.size === 0) return Promise.resolve();
  return new Promise((resolve) => life.idle.push(resolve));
}

/** Fails the reads in flight on this life of the thread, and ends it; the next read starts another. */
function stop(thread: ReaderThread, life: Running, error: Error): void {
  if (thread.life === life) thread.life = { state: 'idle' };
  for (const pending of life.pending.values()) {
    clearTimeout(pending.timer);
    pending.reject(error);
  }
  life.pending.clear();
  // A thread in a long query ends when SQLite returns; unreferenced, it does not hold the process meanwhile.
  idle(life);
  void life.worker.terminate().catch(() => undefined);
}

/** One read of one account's port, by method name, answered by the thread. */
function readInThread(thread: ReaderThread, account: string, port: OperatorPort, method: string, args: unknown[]): Promise<unknown> {
  if (thread.life.state === 'closed') return Promise.reject(new StoreUnavailableError('CLOSED', 'the database is closed'));
  const life = thread.life.state === 'running' ? thread.life : start(thread);
  const id = thread.nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => stop(thread, life, new StoreUnavailableError('TIMEOUT', `the read took longer than ${thread.timeoutMs} ms`)),
      thread.timeoutMs,
    );
    life.pending.set(id, { resolve, reject, timer });
    life.worker.ref();
    try {
      life.worker.postMessage({ id, account, port, method, args } satisfies ReadRequest);
    } catch (error) {
      // Arguments that cannot be copied to the thread (a function): the caller's error, the thread untouched.
      settle(life, { id, ok: false, error: errorShape(error) });
    }
  });
}

/** Closes the thread: reads in flight fail as on a closed database; waits at most a moment for it to end. */
export async function closeReaderThread(thread: ReaderThread): Promise<void> {
  const life = thread.life;
  thread.life = { state: 'closed' };
  if (life.state !== 'running') return;
  const exited = new Promise<void>((resolve) => life.worker.once('exit', () => resolve()));
  stop(thread, life, new StoreUnavailableError('CLOSED', 'the database is closed'));
  await withDeadline(exited, 1000, { unref: true });
}

/** A port whose long reads (../long-reads.ts) the thread answers, and the others `onConnection` does. */
function threadPort<P extends object>(thread: ReaderThread, account: string, port: OperatorPort, onConnection: P): P {
  return withLongReads(
    port,
    onConnection,
    (method) =>
      (...args) =>
        readInThread(thread, account, port, method, args),
  );
}

/** One account's read model and people reads: the thread's, and the main connection's for reads an index bounds. */
export function threadReads(thread: ReaderThread, account: string, onConnection: OperatorReads): OperatorReads {
  return {
    readModel: threadPort(thread, account, 'readModel', onConnection.readModel),
    people: threadPort(thread, account, 'people', onConnection.people),
  };
}
