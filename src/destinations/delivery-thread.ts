// The delivery thread: the destinations' delivery loop (delivery-loop.ts) beside the receiver's
// event loop, at a lower CPU priority. It reads the destinations, their queues and the accounts'
// changes on a read-only connection of its own (WAL shows it every commit; on PostgreSQL a small
// pool), opens their secrets with the accounts key file, signs and sends; its writes go to the
// receiver's writer (delivery-protocol.ts), so that the intake's group commit is never kept waiting
// on a lock this thread holds. Its log lines and settled deliveries are posted to the receiver.
import { parentPort, workerData } from 'node:worker_threads';
import type { LogFn } from 'pino';
import { openStore } from '../store/open.js';
import { lowerPriority } from '../threads.js';
import type { DeliveryLogger } from './delivery-logger.js';
import { startDeliveryLoop } from './delivery-loop.js';
import {
  DESTINATION_WRITES,
  errorOf,
  type DeliveryThreadData,
  type DestinationWrite,
  type Outcome,
  type ReceiverMessage,
  type ThreadMessage,
} from './delivery-protocol.js';
import { openDestinations } from './registry.js';
import { destinationsOf, type DestinationsPort } from './sql.js';

const data = workerData as DeliveryThreadData;
const port = parentPort!;
const post = (message: ThreadMessage) => port.postMessage(message);

const writes = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextWrite = 1;
const wakes = new Set<(account: string) => void>();
let stopping: number | undefined;

/** One write, done by the receiver's writer. */
function write(method: DestinationWrite, args: unknown[]): Promise<unknown> {
  const id = nextWrite++;
  return new Promise((resolve, reject) => {
    writes.set(id, { resolve, reject });
    post({ type: 'write', id, method, args });
  });
}

port.on('message', (message: ReceiverMessage) => {
  if (message.type === 'wake') for (const wake of wakes) wake('');
  else if (message.type === 'stop') stopping = message.timeoutMs;
  else {
    const waiting = writes.get(message.id);
    writes.delete(message.id);
    if (message.ok) waiting?.resolve(message.value);
    else waiting?.reject(errorOf(message.error));
  }
  if (stopping !== undefined) for (const wake of wakes) wake('');
});

/** The rounds and settled deliveries, told to the receiver's metrics a few times a second rather than one message each. */
const counts = (() => {
  const COUNTS_EVERY_MS = 250;
  let rounds = 0;
  let settled = new Map<string, { account: string; destination: string; outcome: Outcome; count: number }>();
  let toldAt = 0;
  const flush = () => {
    if (rounds === 0 && settled.size === 0) return;
    post({ type: 'counts', rounds, settled: [...settled.values()] });
    rounds = 0;
    settled = new Map();
    toldAt = performance.now();
  };
  return {
    settled(account: string, destination: string, outcome: Outcome) {
      const key = JSON.stringify([account, destination, outcome]);
      const entry = settled.get(key) ?? { account, destination, outcome, count: 0 };
      entry.count += 1;
      settled.set(key, entry);
    },
    round() {
      rounds += 1;
      if (performance.now() - toldAt >= COUNTS_EVERY_MS) flush();
    },
    flush,
  };
})();

const logAt = (level: 'info' | 'warn' | 'error') =>
  ((fields: object, message?: string) => post({ type: 'log', level, fields, message: message ?? '' })) as LogFn;
const logger: DeliveryLogger = { info: logAt('info'), warn: logAt('warn'), error: logAt('error') };

lowerPriority();
const store = await openStore(data.connection.database, { ...data.connection.options, readonly: true, migrate: false, poolSize: 2 });
const own = destinationsOf(store);
const written = Object.fromEntries(DESTINATION_WRITES.map((method) => [method, (...args: unknown[]) => write(method, args)]));
const destinations: DestinationsPort = { ...own, ...(written as Pick<DestinationsPort, DestinationWrite>) };
const loop = startDeliveryLoop({
  store: {
    destinations,
    forAccount: (account) => store.forAccount(account),
    onChanges: (wake) => {
      wakes.add(wake);
      return () => wakes.delete(wake);
    },
  },
  destinations: openDestinations(store, {
    ...(data.keyFile !== undefined && { keyFile: data.keyFile }),
    ...(data.databaseFile !== undefined && { databaseFile: data.databaseFile }),
    onNotice: (message) => logger.warn({}, message),
  }),
  logger,
  network: data.network,
  owner: data.owner,
  ...(data.pollMs !== undefined && { pollMs: data.pollMs }),
  onSettled: (account, destination, outcome) => counts.settled(account, destination, outcome),
  onRound: () => counts.round(),
});

/** Waits for the receiver's stop, then stops the loop (its sends in flight waited for) and closes the connection. */
await new Promise<void>((resolve) => {
  const check = () => (stopping === undefined ? undefined : resolve());
  wakes.add(check);
  check();
});
await loop.stop(stopping!);
counts.flush();
await store.close();
post({ type: 'stopped' });
port.close();
