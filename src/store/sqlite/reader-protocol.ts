// What the main thread and the reader thread (reader-thread.ts) say to each other: a read of one
// account's port by method name, and its rows or its error. Both sides take the names from here,
// so a read can only be one the store already has.
import Database from 'better-sqlite3';
import { READ_LENGTHS, type OperatorPort, type ReadLength } from '../long-reads.js';
import { StoreUnavailableError } from '../errors.js';
import type { ErrorShape } from '../../threads.js';

/** What the thread is started with. */
export interface ReaderThreadData {
  /** The SQLite file, opened read-only by the thread. */
  path: string;
  /** How long a read waits for a lock before giving up (ms): the store's busy timeout. */
  busyTimeoutMs: number;
}

export interface ReadRequest {
  id: number;
  account: string;
  port: OperatorPort;
  method: string;
  args: unknown[];
}

/** An error as it crosses the thread: enough to make the same class again. */
export type ReadAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ErrorShape };

/** Whether the thread answers this read: one of the store's own long reads (../long-reads.ts), the thread's. */
export function isThreadRead(port: unknown, method: unknown): port is OperatorPort {
  if (typeof port !== 'string' || typeof method !== 'string' || !Object.hasOwn(READ_LENGTHS, port)) return false;
  const lengths: Record<string, ReadLength> = READ_LENGTHS[port as OperatorPort];
  return Object.hasOwn(lengths, method) && lengths[method] === 'long';
}

/** The error of the thread as the class the same read throws on the main connection. */
export function errorOf(shape: ErrorShape): Error {
  switch (shape.name) {
    case 'StoreUnavailableError':
      return new StoreUnavailableError(shape.code ?? 'STORAGE_ERROR', shape.message);
    case 'SqliteError':
      return new Database.SqliteError(shape.message, shape.code ?? 'SQLITE_ERROR');
    case 'TypeError':
      return new TypeError(shape.message);
    case 'RangeError':
      return new RangeError(shape.message);
    default:
      return Object.assign(
        new Error(shape.message),
        shape.name === 'Error' ? {} : { name: shape.name },
        shape.code && { code: shape.code },
      );
  }
}
