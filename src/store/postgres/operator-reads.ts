// Operator reads on PostgreSQL share the pool with the intake: a console read in a loop, several
// operators, or a script on the query API would otherwise hold every connection with long reads
// (a search over the inbox's bodies takes seconds on a large one), and a delivery would wait for
// a free connection until it answered 503. So the long reads (../long-reads.ts) run at most
// `limit` at once; the others wait their turn here, holding no connection, and give up as BUSY
// (a 503) after `waitMs`. The reads an index bounds are not held back.
import { withDeadline } from '../../deadline.js';
import { withLongReads, type OperatorReads } from '../long-reads.js';
import { StoreUnavailableError } from '../errors.js';

/** The long reads of one pool: how many may run at once, how long one waits for its turn, and who waits. */
export interface ReadGate {
  readonly limit: number;
  readonly waitMs: number;
  running: number;
  readonly waiting: Array<() => void>;
}

export function readGate(limit: number, waitMs: number): ReadGate {
  return { limit: Math.max(1, limit), waitMs, running: 0, waiting: [] };
}

async function enter(gate: ReadGate): Promise<void> {
  if (gate.running < gate.limit) {
    gate.running++;
    return;
  }
  let granted = false;
  let grant!: () => void;
  const turn = new Promise<void>((resolve) => {
    grant = () => {
      granted = true;
      resolve();
    };
  });
  gate.waiting.push(grant);
  await withDeadline(turn, gate.waitMs, { unref: true });
  if (granted) return;
  gate.waiting.splice(gate.waiting.indexOf(grant), 1);
  throw new StoreUnavailableError(
    'BUSY',
    `${gate.limit} long operator reads were running, and none ended within ${gate.waitMs} ms: try again in a moment`,
  );
}

/** A read ended: its place goes to the first one waiting, if any. */
function leave(gate: ReadGate): void {
  const next = gate.waiting.shift();
  if (next === undefined) gate.running--;
  else next();
}

async function throughGate<T>(gate: ReadGate, read: () => Promise<T>): Promise<T> {
  await enter(gate);
  try {
    return await read();
  } finally {
    leave(gate);
  }
}

/** One account's operator reads, the long ones through the gate. */
export function gatedReads(gate: ReadGate, own: OperatorReads): OperatorReads {
  const gated =
    (_method: string, read: (...args: unknown[]) => Promise<unknown>) =>
    (...args: unknown[]) =>
      throughGate(gate, () => read(...args));
  return { readModel: withLongReads('readModel', own.readModel, gated), people: withLongReads('people', own.people, gated) };
}
