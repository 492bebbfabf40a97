// The delivery of every account's destinations in a running receiver (docs/destinations.md): a
// round when a transaction commits changes (this process's; on PostgreSQL any process's, by
// NOTIFY), when a delivery ends, and every `pollMs` in any case; each reads the destinations
// afresh, so a destination the CLI adds, disables or removes, and a change any process commits,
// are taken up within a second. Stopping waits for the deliveries in flight a bounded time.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { alarm, withDeadline } from '../deadline.js';
import type { DeliveryLogger } from './delivery-logger.js';
import type { FeatureSql } from '../store/feature-sql.js';
import type { WorkSignals } from '../store/write-ports.js';
import { networkPolicy, type NetworkRules } from './network-policy.js';
import type { Destinations } from './registry.js';
import { deliveryStoreOf, type AccountChanges, type DeliveryStore } from './sql.js';
import { DELIVERY_TIMEOUT_MS, MAX_CONNECTIONS } from './delivery.js';
import { errorText } from './errors.js';
import { destinationWorker, type DestinationWorker, type WorkerContext } from './worker.js';

export interface DeliveryLoopOptions {
  /**
   * The database: the destinations' tables, each account's changes, and the commits that record
   * them; a store, or (the delivery thread) the port it reads on its own connection and writes through the receiver's.
   */
  store: (
    { readonly featureSql: FeatureSql; forAccount(account: string): AccountChanges } | (DeliveryStore & { readonly featureSql?: never })
  ) & { onChanges: WorkSignals['onChanges'] };
  /** Opens each destination's URL and secrets with the accounts key. */
  destinations: Pick<Destinations, 'open'>;
  logger: DeliveryLogger;
  /** Who holds the destinations' leases: kept by a delivery thread started again, so that it takes them back at once. Default: new. */
  owner?: string;
  /** How often the destinations and the changes are looked at (ms). Default 500. */
  pollMs?: number;
  /** Requests (and connections) in flight per destination at most. Default 16. */
  maxInFlight?: number;
  /**
   * Where destinations may connect: never link-local or cloud metadata addresses, `deny` ranges
   * added, `allow` holes opened in either (CIDR ranges). A bad range is a ConfigurationError.
   */
  network?: NetworkRules;
  /** Consecutive failures that pause a destination. Default 5. */
  pauseAfter?: number;
  timeoutMs?: number;
  now?: () => number;
  /**
   * Whether webhooks are waiting for their write (`Receiver.intakeBusy`): a round waits for them,
   * up to 100 ms, so that delivering never holds the sender's answers back for long.
   */
  intakeBusy?: () => boolean;
  /** Told each delivery settled, by its outcome (serve counts them in its metrics). */
  onSettled?: WorkerContext['onSettled'];
  /** Told each round ended (serve counts them in its metrics). */
  onRound?: () => void;
}

export interface DeliveryLoop {
  /** Stops taking work, waits up to `timeoutMs` for the deliveries in flight, gives the leases back. */
  stop(timeoutMs: number): Promise<void>;
}

// A process killed holding it delays its destinations this long at most (a stop gives it back at once).
const LEASE_MS = 10_000;
// Rounds are this far apart at least (ms): each answer and each commit wakes the loop, and one
// round for several of them costs one transaction and one read of what is due instead of several.
const ROUND_GAP_MS = 5;
// A round waits for the intake's writes this long at most: under a steady flood of webhooks, the
// destinations still get a round every tenth of a second.
const MAX_YIELD_MS = 100;

/** Waits while the intake is busy, up to `mostMs` (MAX_YIELD_MS), a millisecond at a time. */
export async function yieldToIntake(intakeBusy: (() => boolean) | undefined, signal: AbortSignal, mostMs = MAX_YIELD_MS): Promise<void> {
  if (intakeBusy === undefined) return;
  const since = performance.now();
  while (intakeBusy() && !signal.aborted && performance.now() - since < mostMs) await delay(1, undefined, { ref: false });
}

// A round that fails the same way again (a key file missing, a database away) is logged once a
// minute: rounds run at every commit of changes, and the log would hold little else.
const REPEAT_LOG_MS = 60_000;

/** Whether this failure is worth a line: a new one, or the same one a minute after it was logged. */
function worthLogging(logged: Map<string, { message: string; at: number }>, name: string, message: string, now: number): boolean {
  const last = logged.get(name);
  if (last !== undefined && last.message === message && now - last.at < REPEAT_LOG_MS) return false;
  logged.set(name, { message, at: now });
  return true;
}

/** How often the destinations are read when nothing wakes the loop (ms). */
export const DEFAULT_POLL_MS = 500;

/** One round: each destination read afresh and given its worker's round; the workers of removed destinations halted, and dropped once idle. */
async function round(
  context: WorkerContext,
  workers: Map<string, DestinationWorker>,
  logged: Map<string, { message: string; at: number }>,
): Promise<void> {
  const records = await context.store.destinations.list();
  const present = new Set<string>();
  for (const record of records) {
    const name = `${record.account}/${record.destination}`;
    present.add(name);
    let worker = workers.get(name);
    if (worker === undefined) workers.set(name, (worker = destinationWorker(context, record)));
    try {
      await worker.round(record);
      logged.delete(name);
    } catch (error) {
      const message = errorText((error as Error).message);
      if (worthLogging(logged, name, message, context.now()))
        context.logger.error({ destination: record.destination, err: { message } }, 'destination: round failed');
    }
  }
  for (const [name, worker] of workers) {
    if (present.has(name)) continue;
    // Removed: what it has out ends now, and once it has ended the worker goes.
    worker.halt();
    if (worker.inFlight.size === 0) {
      workers.delete(name);
      await worker.close().catch(() => undefined);
    }
  }
}

export function startDeliveryLoop(options: DeliveryLoopOptions): DeliveryLoop {
  const { store, logger } = options;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const stopping = new AbortController();
  const workers = new Map<string, DestinationWorker>();
  // A receiver left open (a script, a test) is not kept alive by its destinations: only their requests in flight do.
  const clock = alarm({ unref: true });
  const context: WorkerContext = {
    store: store.featureSql === undefined ? store : deliveryStoreOf(store),
    destinations: options.destinations,
    owner: options.owner ?? `${process.pid}-${randomUUID()}`,
    logger,
    now: options.now ?? Date.now,
    maxInFlight: options.maxInFlight ?? MAX_CONNECTIONS,
    policy: networkPolicy(options.network),
    pauseAfter: options.pauseAfter ?? 5,
    leaseMs: LEASE_MS,
    timeoutMs: options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    signal: stopping.signal,
    wake: clock.wake,
    onSettled: options.onSettled ?? (() => undefined),
  };
  stopping.signal.addEventListener('abort', clock.wake, { once: true });
  // A commit wakes a round only when there is a destination to give it: without any, the loop
  // costs a read of the empty table every `pollMs`, and nothing at each webhook.
  const unsubscribe = store.onChanges(() => {
    if (workers.size > 0) clock.wake();
  });
  let draining = false;
  const logged = new Map<string, { message: string; at: number }>();
  const running = (async () => {
    while (!stopping.signal.aborted) {
      await yieldToIntake(options.intakeBusy, stopping.signal);
      // Answers and commits that come close together share a round (and its transaction).
      await delay(ROUND_GAP_MS, undefined, { ref: false });
      if (!draining)
        await round(context, workers, logged).catch((error: unknown) => {
          const message = errorText((error as Error).message);
          if (worthLogging(logged, '', message, context.now()))
            logger.error({ err: { message } }, 'destinations: could not read them; trying again');
        });
      if (!draining) options.onRound?.();
      await clock.wait(pollMs);
    }
  })();

  return {
    async stop(timeoutMs) {
      draining = true;
      unsubscribe();
      const inFlight = () => [...workers.values()].flatMap((w) => [...w.inFlight.values()]);
      // Requests still out at the deadline are aborted; their changes stay queued and are sent again.
      const ended = await withDeadline(
        Promise.all(inFlight()).then(() => true),
        timeoutMs,
      );
      stopping.abort();
      await running;
      if (ended !== true) await Promise.all(inFlight());
      await Promise.all([...workers.values()].map((w) => w.release().catch(() => undefined)));
    },
  };
}
