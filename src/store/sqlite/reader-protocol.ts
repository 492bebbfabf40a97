// What the main thread and the reader thread (reader-thread.ts) say to each other: a read of one
// account's port by method name, and its rows or its error. Both sides take the names from here,
// so a read can only be one the store already has.
import Database from 'better-sqlite3';
import type { PeopleReads } from '../ports/people.js';
import type { ReadModel } from '../ports/read-model.js';
import { StoreUnavailableError } from '../store.js';

/** The reads the thread answers, by port and method: a method added to a port must be listed here to compile. */
export const THREAD_READS = {
  readModel: {
    campaign: true,
    campaigns: true,
    listCandidates: true,
    listEvents: true,
    countEvents: true,
    eventIds: true,
    event: true,
    eventsPerMinute: true,
    oldestPending: true,
    kinds: true,
    handlerFailures: true,
    countHandlerFailures: true,
  } satisfies Record<keyof ReadModel, true>,
  people: {
    candidatesMatching: true,
    responses: true,
    rowsNaming: true,
    erasuresOf: true,
    latestErasures: true,
    erasedAmong: true,
    storedEventsOf: true,
    candidateVersions: true,
  } satisfies Record<keyof PeopleReads, true>,
};

export type ThreadPort = keyof typeof THREAD_READS;

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
  port: ThreadPort;
  method: string;
  args: unknown[];
}

/** An error as it crosses the thread: enough to make the same class again. */
interface ErrorShape {
  name: string;
  message: string;
  code: string | undefined;
}

export type ReadAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ErrorShape };

export function isThreadRead(port: unknown, method: unknown): port is ThreadPort {
  return typeof port === 'string' && Object.hasOwn(THREAD_READS, port) && Object.hasOwn(THREAD_READS[port as ThreadPort], method as string);
}

export function errorShape(error: unknown): ErrorShape {
  const code = (error as { code?: unknown } | undefined)?.code;
  return {
    name: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    code: typeof code === 'string' ? code : undefined,
  };
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
