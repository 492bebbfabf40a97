// One destination's delivery, one round at a time (docs/destinations.md): under the destination's
// lease, settle the answers that came since the last round and queue the account's changes after
// its cursor that pass its filter, in one transaction; then send the queued changes that are due
// and first for their entity, a few at a time and at its rate. A change answered but not settled
// yet is not sent again by this process; after a crash (SIGKILL) it is, with the same webhook-id.
import { changeOf } from '../project/changes.js';
import {
  type DeliveryStore,
  type DestinationRecord,
  type DueSend,
  type Enqueued,
  type OperatorEvent,
  type QueuedSend,
  type SendResult,
} from './sql.js';
import type { DeliveryLogger } from './delivery-logger.js';
import { maskedUrl } from './masked-url.js';
import { destinationConnections, postChange, type DeliveryOutcome, type DestinationConnections } from './delivery.js';
import { errorText } from './errors.js';
import type { NetworkPolicy } from './network-policy.js';
import { filterOf, passes } from './filter.js';
import { redisSender, type RedisSender } from './redis-worker.js';
import { destinationType, type Destinations, type OpenedDestination } from './registry.js';
import { natsSender } from './nats-worker.js';
import { delayBefore } from './schedule.js';
import { webhookId } from './signing.js';

export interface WorkerContext {
  store: DeliveryStore;
  /** Opens a destination's URL and secrets with the accounts key. */
  destinations: Pick<Destinations, 'open'>;
  owner: string;
  logger: DeliveryLogger;
  now: () => number;
  /** Requests (and connections) in flight per destination at most. */
  maxInFlight: number;
  /** Where destinations may connect. */
  policy: NetworkPolicy;
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
  /** Ends its requests in flight now, their changes left queued as they were: it was disabled or removed. */
  halt(): void;
  /** The deliveries in flight. */
  readonly inFlight: ReadonlyMap<number, Promise<void>>;
  /** Gives the lease back and closes what it holds open (its connections). */
  release(): Promise<void>;
  /** Closes what it holds open (its connections): the destination was removed. */
  close(): Promise<void>;
}

const PAGE = 200;

/** A delivery answered, to be settled by the next round's transaction. */
interface Answered {
  record: DestinationRecord;
  row: QueuedSend;
  outcome: DeliveryOutcome;
}

/** An operational destination's page: the account's operator events after its cursor, in one order (one entity). */
async function nextEvents(context: WorkerContext, record: DestinationRecord): Promise<{ enqueued: Enqueued; full: boolean } | undefined> {
  const { events } = await context.store.destinations.events(record.account, record.cursor, PAGE);
  const last = events.at(-1)?.seq;
  if (last === undefined) return undefined;
  context.destinations.open(record); // a destination whose secrets do not open queues nothing
  const changes = events.map((event) => ({ seq: event.seq, entity: 'operator' as const, id: 'events' }));
  return { enqueued: { from: record.cursor, to: last, changes, now: context.now() }, full: events.length === PAGE };
}

/** The changes after the cursor that pass the filter, a page of them, as the round's transaction queues them; undefined when none came. */
async function nextPage(
  context: WorkerContext,
  record: DestinationRecord,
): Promise<{ enqueued: Enqueued; full: boolean } | 'rewound' | undefined> {
  if (record.kind === 'operational') return await nextEvents(context, record);
  const page = await context.store.forAccount(record.account).changesAfter(record.cursor, PAGE);
  if (page.last < record.cursor) {
    await rewind(context, record, page.last);
    return 'rewound';
  }
  if (record.cursor < page.droppedThrough)
    context.logger.warn(
      { destination: record.destination, account: record.account, cursor: record.cursor, droppedThrough: page.droppedThrough },
      'destination: changes were dropped by retention before they were looked at',
    );
  const last = page.changes.at(-1)?.seq ?? Math.max(record.cursor, page.droppedThrough);
  if (last === record.cursor) return undefined;
  const filter = filterOf(record.filter);
  const changes = page.changes.map(changeOf).filter((change) => passes(filter, change));
  context.destinations.open(record); // a destination whose secrets do not open queues nothing
  return { enqueued: { from: record.cursor, to: last, changes, now: context.now() }, full: page.changes.length === PAGE };
}

/**
 * The account's changes stop below the destination's cursor: the database was restored from an
 * older backup, and the numbers after its head will be given to other changes. The destination is
 * held (an operator checks what the receiver holds before it goes on), its cursor at the head, so
 * that the changes recorded from now on are queued meanwhile and sent once it is enabled.
 */
async function rewind(context: WorkerContext, record: DestinationRecord, head: number): Promise<void> {
  const reason =
    `the account's changes stop at seq ${head}, below this destination's cursor ${record.cursor} ` +
    '(a database restored from an older backup?): what the receiver holds past it may differ; ' +
    `it goes on from ${head} once enabled (\`prequal-hooks destinations enable\`)`;
  await context.store.destinations.rewind(record, head, reason, new Date(context.now()).toISOString());
  context.logger.error(
    { destination: record.destination, account: record.account, cursor: record.cursor, head },
    `destination paused: ${reason}`,
  );
}

/** How the answer leaves the change: delivered, or failed and due again (or set aside) on the destination's schedule. */
function settlementOf(context: WorkerContext, { record, row, outcome }: Answered): SendResult {
  const at = new Date(context.now()).toISOString();
  if (outcome.ok) return { seq: row.seq, at };
  const schedule = JSON.parse(record.schedule) as number[];
  const delay = delayBefore(schedule, row.attempts + 1);
  const nextAt = context.now() + Math.max(delay ?? 0, outcome.retryAfterMs ?? 0);
  const failed = { dead: delay === undefined, nextAt, status: outcome.status, error: outcome.error, pauseAfter: context.pauseAfter };
  return { seq: row.seq, at, failed };
}

/** Told once settled: the metrics, and a line for each failure. */
function report(context: WorkerContext, { record, row, outcome }: Answered, settlement: SendResult): void {
  const dead = settlement.failed?.dead === true;
  context.onSettled(record.account, record.destination, outcome.ok ? 'delivered' : dead ? 'dead' : 'failed');
  if (outcome.ok) return;
  const where = { destination: record.destination, account: record.account, seq: row.seq, url: maskedUrl(record.url) };
  context.logger.warn(
    { ...where, status: outcome.status, error: outcome.error, attempts: row.attempts + 1 },
    dead ? 'destination: delivery failed, its schedule is spent: set aside (dead)' : 'destination: delivery failed; tried again later',
  );
}

/** A 410: the destination is disabled at once, its queue kept for enable. */
async function gone(context: WorkerContext, record: DestinationRecord, row: QueuedSend): Promise<void> {
  await context.store.destinations.setState(record, 'disabled', 'the receiver answered 410 Gone', new Date(context.now()).toISOString());
  const where = { destination: record.destination, account: record.account, seq: row.seq, url: maskedUrl(record.url) };
  context.logger.warn({ ...where, status: 410 }, 'destination disabled: it answered 410 Gone');
  context.onSettled(record.account, record.destination, 'failed');
}

const DROPPED = { ok: false as const, status: null, error: 'the change was dropped by retention', gone: false, retryAfterMs: undefined };

/**
 * An operator event as an operational destination receives it (docs/destinations.md, "Operator
 * events"): its type, account, the destination concerned, when, why, and a dead delivery's seq.
 */
function operatorMessage(record: DestinationRecord, event: OperatorEvent): { id: string; body: string } {
  const body = {
    type: event.type,
    account: record.account,
    destination: event.destination,
    at: event.at,
    reason: event.reason,
    ...(event.change_seq !== null && { seq: event.change_seq }),
    event: event.seq,
  };
  return { id: `${record.destination}_event_${event.seq}`, body: JSON.stringify(body) };
}

/** Sends one due change (as stored when the round read it, so an erasure before reaches it), signed; its answer, or undefined when stopped mid-request. */
async function deliver(
  context: WorkerContext,
  state: WorkerState,
  record: DestinationRecord,
  opened: OpenedDestination,
  due: DueSend,
): Promise<Answered | undefined> {
  const { change: stored, ...row } = due;
  let message: { id: string; body: string };
  if (record.kind === 'operational') {
    const [event] = (await context.store.destinations.events(record.account, row.seq - 1, 1)).events;
    if (event?.seq !== row.seq)
      return { record: { ...record, schedule: '[]' }, row, outcome: { ...DROPPED, error: 'the operator event is gone' } };
    message = operatorMessage(record, event);
  } else {
    // Retention keeps what a destination needs; a change gone all the same is set aside at once.
    if (stored === null) return { record: { ...record, schedule: '[]' }, row, outcome: DROPPED };
    const change = changeOf(stored);
    message = { id: webhookId(record.destination, change), body: JSON.stringify({ account: record.account, ...change }) };
  }
  const { id, body } = message;
  const timestamp = Math.floor(context.now() / 1000);
  const { signal } = state.requests;
  const outcome = await postChange(
    opened,
    { id, timestamp, body },
    { signal, connections: state.connections, timeoutMs: context.timeoutMs, now: context.now },
  );
  if (signal.aborted && !outcome.ok) return undefined; // stopped mid-request: it stays queued as it was
  return { record, row, outcome };
}

type Key = { account: string; destination: string };

/**
 * Settles the answers waiting and queues a page, in one transaction; whether the page was queued.
 * The answers stay in `answered` until the transaction committed (so that their changes are not
 * sent again meanwhile, nor lost if it fails); answers that come during it are added after them.
 */
async function commitRound(context: WorkerContext, key: Key, answered: Answered[], enqueued?: Enqueued): Promise<boolean> {
  const taken = answered.slice();
  const settlements = taken.map((a) => settlementOf(context, a));
  const queued = await context.store.destinations.commit(key, settlements, enqueued);
  answered.splice(0, taken.length);
  taken.forEach((a, i) => report(context, a, settlements[i]!));
  return queued;
}

/** The round's writes: the answers settled, and the changes after the cursor queued, a page a transaction; the record as it then stands. */
async function settleAndQueue(context: WorkerContext, record: DestinationRecord, answered: Answered[]): Promise<DestinationRecord> {
  const key = { account: record.account, destination: record.destination };
  for (;;) {
    const page = await nextPage(context, record);
    if (page === 'rewound') {
      if (answered.length > 0) await commitRound(context, key, answered);
      return (await context.store.destinations.get(key)) ?? record;
    }
    if (answered.length === 0 && page === undefined) return record;
    const queued = await commitRound(context, key, answered, page?.enqueued);
    if (page === undefined) return record;
    // Moved by another process meanwhile (a lease taken over): read where it is.
    const next = queued ? { ...record, cursor: page.enqueued.to } : await context.store.destinations.get(key);
    if (next === undefined || !page.full) return next ?? record;
    record = next;
  }
}

/** What one destination's worker keeps between rounds. */
interface WorkerState {
  /** Requests out, by seq. */
  inFlight: Map<number, Promise<void>>;
  /** Answers to settle at the next round, oldest first (their changes are not sent again meanwhile). */
  answered: Answered[];
  /** When the next request may go, at the destination's rate. */
  nextSlot: number;
  /** Its own connections: their cap is the destination's, and closing them ends its requests only. */
  connections: DestinationConnections;
  /** Ends its requests in flight: aborted (and replaced) when it is disabled or removed, and when the loop stops. */
  requests: AbortController;
}

/** Ended, a delivery wakes the loop (its answer is settled, and the next change may be due now), unless it says nothing more is. */
function track(context: WorkerContext, state: WorkerState, record: DestinationRecord, seq: number, sending: Promise<boolean | void>): void {
  state.inFlight.set(
    seq,
    sending
      .catch((error: unknown) =>
        context.logger.error(
          { destination: record.destination, seq, err: { message: errorText((error as Error).message) } },
          'destination: delivery',
        ),
      )
      .then((more) => {
        state.inFlight.delete(seq);
        if (more !== false) context.wake();
      }),
  );
}

/** Sends the due changes that are first for their entity, as many as there is room for, at the destination's rate. */
async function sendDue(context: WorkerContext, state: WorkerState, record: DestinationRecord, opened: OpenedDestination): Promise<void> {
  const paused = record.state === 'paused';
  const room = (paused ? 1 : context.maxInFlight) - state.inFlight.size - state.answered.length;
  if (room <= 0) return;
  const sent = [...state.inFlight.keys(), ...state.answered.map((a) => a.row.seq)];
  for (const row of await context.store.destinations.due(record, context.now(), room, paused, sent)) {
    if (record.rate !== null) {
      const now = context.now();
      if (now < state.nextSlot) {
        setTimeout(context.wake, state.nextSlot - now).unref();
        break;
      }
      state.nextSlot = Math.max(now, state.nextSlot) + 1000 / record.rate;
    }
    const sending = deliver(context, state, record, opened, row).then(async (answer) => {
      if (answer === undefined) return;
      if (!answer.outcome.ok && answer.outcome.gone) return await gone(context, record, row);
      state.answered.push(answer);
    });
    track(context, state, record, row.seq, sending);
  }
}

/**
 * Throws when this process cannot open the destination (no accounts key, or another one): it is
 * left to a process that can, its lease not taken, and given back when `leased`.
 */
async function opensHere(context: WorkerContext, record: DestinationRecord, leased: boolean): Promise<void> {
  try {
    context.destinations.open(record);
  } catch (error) {
    if (leased) await context.store.destinations.release(record, context.owner);
    throw error;
  }
}

export function destinationWorker(context: WorkerContext, key: Key): DestinationWorker {
  const state: WorkerState = {
    inFlight: new Map(),
    answered: [],
    nextSlot: 0,
    connections: destinationConnections(context.policy, context.maxInFlight),
    requests: new AbortController(),
  };
  const { inFlight, answered } = state;
  // Renewed when a third of it is gone, not every round: an idle destination costs no write.
  let leasedAt = -Infinity;
  // A Redis stream or a NATS subject: one ordered log, appended (published) to one change at a time.
  let log: RedisSender | undefined;
  const logSender = (url: string) => (log ??= destinationType(url) === 'nats' ? natsSender(context) : redisSender(context));
  const stopped = () => state.requests.abort();
  context.signal.addEventListener('abort', stopped, { once: true });
  const halt = () => {
    state.requests.abort();
    state.requests = new AbortController();
    state.connections.close();
    log?.halt();
  };

  return {
    inFlight,
    halt,
    async round(record) {
      if (record.state === 'disabled' || context.signal.aborted) {
        // Disabled: what it has out ends now, not at its deadline (its changes stay queued for enable).
        if (record.state === 'disabled') halt();
        if (answered.length > 0) await commitRound(context, key, answered);
        if (inFlight.size === 0) await log?.close();
        return;
      }
      await opensHere(context, record, leasedAt !== -Infinity).catch((error: unknown) => {
        leasedAt = -Infinity;
        throw error;
      });
      if (context.now() - leasedAt > context.leaseMs / 3) {
        const at = context.now();
        if (!(await context.store.destinations.lease(key, context.owner, at, context.leaseMs))) return;
        leasedAt = at;
      }
      record = await settleAndQueue(context, record, answered);
      // Held paused (a Redis stream it did not write): its changes are queued, nothing is sent until an operator enables it.
      if (record.state === 'paused' && record.hold === 1) {
        if (inFlight.size === 0) await log?.close();
        return;
      }
      // Opened each round: a rotated secret, or the end of a previous one's overlap, is taken at once.
      const opened = context.destinations.open(record);
      // A stream is one ordered log: one append at a time, in seq order, never beside another.
      if (destinationType(record.url) !== 'http') {
        if (inFlight.size === 0)
          track(
            context,
            state,
            record,
            0,
            logSender(record.url).send(record, opened, { onlyOne: record.state === 'paused', signal: state.requests.signal }),
          );
        return;
      }
      await sendDue(context, state, record, opened);
    },
    release: async () => {
      leasedAt = -Infinity;
      state.connections.close();
      await log?.close();
      if (answered.length > 0) await commitRound(context, key, answered);
      await context.store.destinations.release(key, context.owner);
    },
    close: async () => {
      context.signal.removeEventListener('abort', stopped);
      state.connections.close();
      await log?.close();
    },
  };
}
