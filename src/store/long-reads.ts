// Which operator reads may read many rows, written once for every engine. A long read (a list, a
// search, a count, the chart, an export) never runs where the intake waits for it: on SQLite in
// the reader thread (sqlite/off-loop-reads.ts), on PostgreSQL within the operator reads' share of
// the pool (postgres/operator-reads.ts). A read an index bounds to a few rows (an event or a
// campaign by id; the backlog's age, which /metrics reads within a deadline) runs where it is
// called, and never queues behind a long one.
import type { PeopleReads } from './ports/people.js';
import type { ReadModel } from './ports/read-model.js';

export type ReadLength = 'long' | 'bounded';

/** By port and method. A method added to a port must be placed here to compile. */
export const READ_LENGTHS = {
  readModel: {
    campaign: 'bounded',
    campaigns: 'long',
    listCandidates: 'long',
    listEvents: 'long',
    countEvents: 'long',
    eventIds: 'long',
    event: 'bounded',
    newestEventId: 'bounded',
    eventsPerMinute: 'long',
    oldestPending: 'bounded',
    kinds: 'long',
    handlerFailures: 'long',
    countHandlerFailures: 'long',
  } satisfies Record<keyof ReadModel, ReadLength>,
  people: {
    candidatesMatching: 'long',
    responses: 'long',
    rowsNaming: 'long',
    erasuresOf: 'long',
    latestErasures: 'long',
    erasedAmong: 'long',
    storedEventsOf: 'long',
    candidateVersions: 'long',
    changesOf: 'long',
  } satisfies Record<keyof PeopleReads, ReadLength>,
};

/** The ports of the operator's reads. */
export interface OperatorReads {
  readModel: ReadModel;
  people: PeopleReads;
}

export type OperatorPort = keyof typeof READ_LENGTHS;

/** The port with its long reads made by `long(method, read)`, its bounded ones as they are. */
export function withLongReads<P extends object>(
  port: OperatorPort,
  own: P,
  long: (method: string, read: (...args: unknown[]) => Promise<unknown>) => (...args: unknown[]) => Promise<unknown>,
): P {
  const reads = Object.entries(READ_LENGTHS[port]).map(([method, length]) => {
    const read = (own as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!;
    return [method, length === 'long' ? long(method, read) : read];
  });
  return Object.fromEntries(reads) as P;
}
