// What the main thread and the reader thread (reader-thread.ts) say to each other: a read of one
// account's port by method name, and its rows or its error. Both sides take the names from here,
// so a read can only be one the store already has.
import Database from 'better-sqlite3';
import type { PeopleReads } from '../ports/people.js';
import type { ReadModel } from '../ports/read-model.js';
import { StoreUnavailableError } from '../store.js';

/**
 * Where each read runs, by port and method: in the thread those that may read many rows (lists,
 * searches, counts, the chart, exports); on the main connection those an index bounds to a few,
 * which must not queue behind a long read (an event by id; a campaign by id; the backlog's age,
 * which /metrics reads within a deadline). A method added to a port must be placed here to compile.
 */
export const READ_PLACES = {
  readModel: {
    campaign: 'connection',
    campaigns: 'thread',
    listCandidates: 'thread',
    listEvents: 'thread',
    countEvents: 'thread',
    eventIds: 'thread',
    event: 'connection',
    newestEventId: 'connection',
    eventsPerMinute: 'thread',
    oldestPending: 'connection',
    kinds: 'thread',
    handlerFailures: 'thread',
    countHandlerFailures: 'thread',
  } satisfies Record<keyof ReadModel, ReadPlace>,
  people: {
    candidatesMatching: 'thread',
    responses: 'thread',
    rowsNaming: 'thread',
    erasuresOf: 'thread',
    latestErasures: 'thread',
    erasedAmong: 'thread',
    storedEventsOf: 'thread',
    candidateVersions: 'thread',
  } satisfies Record<keyof PeopleReads, ReadPlace>,
};

type ReadPlace = 'thread' | 'connection';

export type ThreadPort = keyof typeof READ_PLACES;

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

/** Whether the thread answers this read: one of the store's own, placed in the thread. */
export function isThreadRead(port: unknown, method: unknown): port is ThreadPort {
  if (typeof port !== 'string' || typeof method !== 'string' || !Object.hasOwn(READ_PLACES, port)) return false;
  const places: Record<string, ReadPlace> = READ_PLACES[port as ThreadPort];
  return Object.hasOwn(places, method) && places[method] === 'thread';
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
