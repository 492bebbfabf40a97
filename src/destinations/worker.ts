// One destination's delivery, one round at a time (docs/destinations.md): under the destination's
// lease, queue the account's changes after its cursor that pass its filter, then send the queued
// changes that are due and first for their entity, a few at a time and at its rate. Each outcome
// is settled by seq in the database at once, so a restart (or SIGKILL) resumes where it was.
import type { Logger } from '../logging.js';
import { changeOf } from '../project/changes.js';
import { maskedUrl, type DestinationRecord, type QueuedDelivery } from '../store/destinations.js';
import type { Store } from '../store/store.js';
import { postChange, type DeliveryOutcome } from './delivery.js';
import { filterOf, passes } from './filter.js';
import { redisSender } from './redis-worker.js';
import { isRedisUrl, type Destinations, type OpenedDestination } from './registry.js';
import { delayBefore } from './schedule.js';
import { webhookId } from './signing.js';

export interface WorkerContext {
  store: Store;
  destinations: Destinations;
  owner: string;
  logger: Logger;
  now: () => number;
  /** Requests in flight per destination at most. */
  maxInFlight: number;
  /** Consecutive failures that pause a destination (the breaker). */
  pauseAfter: number;
  leaseMs: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** Called when a delivery ends: the next change of its entity may be due now. */
  wake: () => void;
  /** A delivery settled: delivered, failed (due again, or its destination disabled by a 410) or dead. */
  onSettled: (account: string, destination: string, outcome: 'delivered' | 'failed' | 'dead') => void;
}

export interface DestinationWorker {
  round(record: DestinationRecord): Promise<void>;
  /** The deliveries in flight. */
  readonly inFlight: ReadonlyMap<number, Promise<void>>;
  /** Gives the lease back and closes what it holds open (a Redis connection). */
  release(): Promise<void>;
  /** Closes what it holds open (a Redis connection): the destination was removed. */
  close(): Promise<void>;
}

const PAGE = 200;

/** Queues the changes after the cursor that pass the filter, a page at a time; whether a full page came (more may wait). */
async function enqueue(context: WorkerContext, record: DestinationRecord): Promise<boolean> {
  const page = await context.store.forAccount(record.account).changesAfter(record.cursor, PAGE);
  if (record.cursor < page.droppedThrough)
    context.logger.warn(
      { destination: record.destination, account: record.account, cursor: record.cursor, droppedThrough: page.droppedThrough },
      'destination: changes were dropped by retention before they were looked at',
    );
  const last = page.changes.at(-1)?.seq ?? Math.max(record.cursor, page.droppedThrough);
  if (last === record.cursor) return false;
  const filter = filterOf(record.filter);
  const queued = page.changes.map(changeOf).filter((change) => passes(filter, change));
  context.destinations.open(record); // a destination whose secrets do not open queues nothing
  await context.store.destinations.enqueue(record, record.cursor, last, queued, context.now());
  return page.changes.length === PAGE;
}

async function settle(context: WorkerContext, record: DestinationRecord, row: QueuedDelivery, outcome: DeliveryOutcome): Promise<void> {
  const { store, logger, now } = context;
  const at = new Date(now()).toISOString();
  const where = { destination: record.destination, account: record.account, seq: row.seq, url: maskedUrl(record.url) };
  if (outcome.ok) {
    await store.destinations.delivered(record, row.seq, at);
    context.onSettled(record.account, record.destination, 'delivered');
    return;
  }
  if (outcome.gone) {
    await store.destinations.setState(record, 'disabled', 'the receiver answered 410 Gone', at);
    logger.warn({ ...where, status: 410 }, 'destination disabled: it answered 410 Gone');
    context.onSettled(record.account, record.destination, 'failed');
    return;
  }
  const schedule = JSON.parse(record.schedule) as number[];
  const delay = delayBefore(schedule, row.attempts + 1);
  const dead = delay === undefined;
  const nextAt = now() + Math.max(delay ?? 0, outcome.retryAfterMs ?? 0);
  await store.destinations.failed(record, {
    seq: row.seq,
    dead,
    nextAt,
    status: outcome.status,
    error: outcome.error,
    at,
    pauseAfter: context.pauseAfter,
  });
  context.onSettled(record.account, record.destination, dead ? 'dead' : 'failed');
  logger.warn(
    { ...where, status: outcome.status, error: outcome.error, attempts: row.attempts + 1 },
    dead ? 'destination: delivery failed, its schedule is spent: set aside (dead)' : 'destination: delivery failed; tried again later',
  );
}

/** Sends one queued change: read from `changes` now (so an erasure since reaches it), signed, posted, settled. */
async function deliver(context: WorkerContext, record: DestinationRecord, opened: OpenedDestination, row: QueuedDelivery): Promise<void> {
  const page = await context.store.forAccount(record.account).changesAfter(row.seq - 1, 1);
  const stored = page.changes[0];
  if (stored?.seq !== row.seq) {
    const outcome = {
      ok: false as const,
      status: null,
      error: 'the change was dropped by retention',
      gone: false,
      retryAfterMs: undefined,
    };
    await settle(context, { ...record, schedule: '[]' }, row, outcome);
    return;
  }
  const change = changeOf(stored);
  const id = webhookId(record.destination, change);
  const body = JSON.stringify({ account: record.account, ...change });
  const timestamp = Math.floor(context.now() / 1000);
  const outcome = await postChange(
    opened,
    { id, timestamp, body },
    { signal: context.signal, timeoutMs: context.timeoutMs, now: context.now },
  );
  if (context.signal.aborted && !outcome.ok) return; // stopped mid-request: it stays queued as it was
  await settle(context, record, row, outcome);
}

export function destinationWorker(context: WorkerContext, key: { account: string; destination: string }): DestinationWorker {
  const inFlight = new Map<number, Promise<void>>();
  let nextSlot = 0;
  // Renewed when a third of it is gone, not every round: an idle destination costs no write.
  let leasedAt = -Infinity;

  const redis = redisSender(context);
  // Ended, a delivery wakes the loop (the next change may be due now), unless it says nothing more is.
  const track = (record: DestinationRecord, row: { seq: number }, sending: Promise<boolean | void>) => {
    inFlight.set(
      row.seq,
      sending
        .catch((error: unknown) =>
          context.logger.error(
            { destination: record.destination, seq: row.seq, err: { message: (error as Error).message } },
            'destination: delivery',
          ),
        )
        .then((more) => {
          inFlight.delete(row.seq);
          if (more !== false) context.wake();
        }),
    );
  };
  const start = (record: DestinationRecord, destination: OpenedDestination, row: QueuedDelivery) =>
    track(record, row, deliver(context, record, destination, row));

  return {
    inFlight,
    async round(record) {
      if (record.state === 'disabled' || context.signal.aborted) {
        if (inFlight.size === 0) await redis.close();
        return;
      }
      if (context.now() - leasedAt > context.leaseMs / 3) {
        const at = context.now();
        if (!(await context.store.destinations.lease(key, context.owner, at, context.leaseMs))) return;
        leasedAt = at;
      }
      while (await enqueue(context, record)) record = (await context.store.destinations.get(key)) ?? record;
      // Opened each round: a rotated secret, or the end of a previous one's overlap, is taken at once.
      const opened = context.destinations.open(record);
      const paused = record.state === 'paused';
      // A stream is one ordered log: one append at a time, in seq order, never beside another.
      if (isRedisUrl(record.url)) {
        if (inFlight.size === 0) track(record, { seq: 0 }, redis.send(record, opened, paused));
        return;
      }
      const room = (paused ? 1 : context.maxInFlight) - inFlight.size;
      if (room <= 0) return;
      const due = await context.store.destinations.due(key, context.now(), room + inFlight.size, paused);
      for (const row of due.filter((d) => !inFlight.has(d.seq)).slice(0, room)) {
        if (record.rate !== null) {
          const now = context.now();
          if (now < nextSlot) {
            setTimeout(context.wake, nextSlot - now).unref();
            break;
          }
          nextSlot = Math.max(now, nextSlot) + 1000 / record.rate;
        }
        start(record, opened, row);
      }
    },
    release: async () => {
      leasedAt = -Infinity;
      await redis.close();
      await context.store.destinations.release(key, context.owner);
    },
    close: () => redis.close(),
  };
}
