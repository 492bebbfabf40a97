// A receiver's life: its state, opening the store (at once on SQLite, retried in the background on
// PostgreSQL), wiring the store to group commit, dispatcher and heartbeat, readiness, and closing.
import { setTimeout as delay } from 'node:timers/promises';
import type { DeadLetters } from '../dispatch/dead-letters.js';
import { prepareDeadLetters } from '../dispatch/dead-letters.js';
import { createDispatcher, type Dispatcher } from '../dispatch/dispatcher.js';
import type { HandlerRegistry } from '../dispatch/handlers.js';
import type { Tracing } from '../tracing/otel.js';
import type { ErasureHooks } from '../privacy/hooks.js';
import type { Logger } from '../logging.js';
import type { createMetrics } from '../metrics/prometheus.js';
import type { BodyBudget } from '../receive/budget.js';
import type { Admission } from '../receive/admission.js';
import { createQueries, type Queries } from '../query/index.js';
import type { Delivery, StoreOutcome } from '../receive/delivery.js';
import type { EnvelopeReading } from '../events/index.js';
import { createKeptReadings, type KeptReadings } from '../dispatch/kept-readings.js';
import { createGroupCommit, type GroupCommit } from '../store/group-commit.js';
import { openAtOnce, openStore, type StoreOptions } from '../store/open.js';
import { keepPresence, type Presence } from '../store/presence.js';
import { describeStorageError, StoreUnavailableError } from '../store/errors.js';
import type { ReadinessProbe } from '../store/rows.js';
import type { Store } from '../store/store.js';
import type { ReceiverOptions } from './options.js';
import { watchRegistry, type AccountsWatch, type RoutesUpdate } from './accounts.js';
import type { Background, BackgroundSettings } from './background.js';
import { withDeadline } from '../deadline.js';

/** How long readiness stays false after a webhook could not be stored (ms). */
const WRITE_FAILURE_HOLD_MS = 5000;

/** What runs on an open store. */
export interface Running {
  store: Store;
  groupCommit: GroupCommit;
  dispatcher: Dispatcher;
  deadLetters: DeadLetters;
  queries: Queries;
  presence: Presence | undefined;
  /** The registry of the other accounts, polled; none when `accounts: false`. */
  accounts: AccountsWatch | undefined;
  /** The intake's readings of the bodies it stored, until the projection claims their rows. */
  readings: KeptReadings<EnvelopeReading>;
  /** What runs beside the intake (background.ts): destinations, retention, schedules. */
  background: Background | undefined;
}

export interface ReceiverState {
  readonly options: ReceiverOptions;
  readonly logger: Logger;
  readonly handlers: HandlerRegistry;
  /** OpenTelemetry, when the application registered a tracer provider before creating the receiver. */
  readonly tracing: Tracing | undefined;
  /** The application's onErase hooks, and the rounds that call them. */
  readonly eraseHooks: ErasureHooks;
  readonly metrics: ReturnType<typeof createMetrics>;
  /** The bytes of request bodies held before verification, by all of this receiver's adapters. */
  readonly budget: BodyBudget;
  /** Who is read and verified first when requests contend, shared by every adapter of the receiver. */
  readonly admission: Admission;
  readonly storeOptions: StoreOptions;
  readonly heartbeat: { everyMs: number } | undefined;
  /** A store given open (the CLI's) stays the caller's to close. */
  readonly ownsStore: boolean;
  /** Hands the intake the accounts' routes (set once the intake is made). */
  setRoutes: (routes: RoutesUpdate) => void;
  /** The background work the options asked for, checked when the receiver was made. */
  readonly background: BackgroundSettings;
  /** Starts it on the open store (set by createReceiver, which holds the members it goes through). */
  startBackground: (running: Running) => Background | undefined;
  /** Where the receiver is in its life; changed only by `enter`. */
  life: Life;
}

/**
 * A receiver's life: opening its store (in the background on PostgreSQL), open, failed to open
 * (an error retrying cannot mend), closing, closed. What ran keeps being reachable after close.
 */
type Life =
  | {
      state: 'opening';
      /** Settles once the store is open and wired. */
      opened: Promise<Running>;
      /** Aborted by close(): the background open stops waiting and gives up. */
      cancel: AbortController;
    }
  | {
      state: 'open';
      running: Running;
      /**
       * The last webhook write that failed, until one succeeds: readiness stays false for a while
       * after it, even when a small probe write gets through (a full disk can take a probe, not an event).
       */
      writeFailure: { code: string; at: number } | undefined;
    }
  | { state: 'failed'; error: Error }
  | { state: 'closing'; running: Running | undefined }
  | { state: 'closed'; running: Running | undefined };

/** The one place the receiver's life changes. */
function enter(state: ReceiverState, next: Life): void {
  state.life = next;
}

/** What runs on the store, if it was ever opened (still reachable once closed, for metrics and late calls). */
export function runningOf(state: ReceiverState): Running | undefined {
  const { life } = state;
  return life.state === 'open' || life.state === 'closing' || life.state === 'closed' ? life.running : undefined;
}

const closedBeforeOpen = () => new StoreUnavailableError('CLOSED', 'the receiver was closed before its database opened');

/** Wires a store to group commit, the dispatcher and the heartbeat, and takes up what a previous run left. */
function assemble(state: ReceiverState, store: Store): Running {
  const { metrics, logger } = state;
  // The next turn: the answers of a commit go out before any projection starts (`dispatcher` is
  // set before the first commit can end).
  const groupCommit = createGroupCommit(store, {
    onCommitted: () => setImmediate(() => dispatcher.notify()),
    onOutcome: (failure) => {
      if (state.life.state === 'open')
        state.life.writeFailure = failure === undefined ? undefined : { code: failure, at: performance.now() };
    },
  });
  const observer = {
    processed: (row: { account: string; kind: string | null; received_at: string }, outcome: string, at: number) =>
      metrics.event(row.account, row.kind, outcome, row.received_at, at),
    handlerCall: (handler: string, result: 'ok' | 'failed' | 'timeout') => metrics.handlerCall(handler, result),
  };
  // Each body is read once in this process: the projection takes the intake's reading of the rows it stored.
  const readings = createKeptReadings<EnvelopeReading>();
  const dispatcher = createDispatcher(
    {
      store,
      handlers: state.handlers,
      logger,
      observer,
      tracing: state.tracing,
      intakeBusy: () => groupCommit.waiting() > 0,
      readings,
    },
    state.options.dispatch,
  );
  // Crash recovery: whatever a previous run stored but did not process is taken up now.
  dispatcher.start();
  const presence = state.heartbeat && keepPresence(store, { ...state.heartbeat, logger });
  setImmediate(() => state.eraseHooks.kick()); // once open: erasures owed from before
  const running: Running = {
    store,
    groupCommit,
    dispatcher,
    deadLetters: prepareDeadLetters(store, () => dispatcher.start()),
    queries: createQueries(store),
    presence,
    accounts: watchRegistry(state.options, store, logger, (routes) => state.setRoutes(routes)),
    readings,
    background: undefined,
  };
  running.background = state.startBackground(running);
  return running;
}

/**
 * Opens the store: now when its engine can (SQLite, so that a bad path or a newer schema throws
 * from createReceiver), otherwise in the background, retried while the database is unavailable.
 */
export function openReceiverStore(state: ReceiverState): void {
  const openNow = openAtOnce(state.options.database, state.storeOptions);
  if (openNow !== undefined) {
    enter(state, { state: 'open', running: assemble(state, openNow), writeFailure: undefined });
    return;
  }
  const cancel = new AbortController();
  const opened = openInBackground(state, cancel.signal);
  opened.catch(() => undefined); // surfaced by ready(), 503s and the log, never as an unhandled rejection
  enter(state, { state: 'opening', opened, cancel });
}

async function openInBackground(state: ReceiverState, cancelled: AbortSignal): Promise<Running> {
  const { logger } = state;
  for (let wait = 250; ; wait = Math.min(wait * 2, 5000)) {
    if (cancelled.aborted) throw closedBeforeOpen();
    let store: Store;
    try {
      store = await openStore(state.options.database, state.storeOptions);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) {
        if (!cancelled.aborted) enter(state, { state: 'failed', error: error as Error });
        logger.error({ err: { message: (error as Error).message } }, 'cannot open the database');
        throw error;
      }
      logger.warn({ code: error.code, retryInMs: wait }, 'database unavailable; retrying');
      await delay(wait, undefined, { signal: cancelled }).catch(() => undefined);
      continue;
    }
    // Closed while it was opening: nothing may start on it (a dispatcher, a heartbeat).
    if (cancelled.aborted) {
      if (state.ownsStore) await store.close();
      throw closedBeforeOpen();
    }
    const running = assemble(state, store);
    enter(state, { state: 'open', running, writeFailure: undefined });
    return running;
  }
}

/** What runs on the store, waiting for it when it is still opening. */
export async function whenOpen(state: ReceiverState): Promise<Running> {
  const { life } = state;
  if (life.state === 'opening') return await life.opened;
  if (life.state === 'failed') throw life.error;
  const running = runningOf(state);
  if (running === undefined) throw closedBeforeOpen();
  return running;
}

/** The intake's store: group commit once open; 503 answers until then, or after a failure to open. */
export async function storeDelivery(state: ReceiverState, delivery: Delivery, reading?: EnvelopeReading): Promise<StoreOutcome> {
  const { life } = state;
  if (life.state === 'failed') return { ok: false, code: 'DATABASE_ERROR', message: life.error.message };
  const running = runningOf(state);
  if (running === undefined) return { ok: false, code: 'STARTING', message: 'the database is not open yet' };
  // Kept from the commit on, before this process's projection can claim the row.
  const keep =
    reading?.ok === true ? (inboxId: number) => running.readings.keep(inboxId, delivery.raw, reading.identity, reading) : undefined;
  return running.groupCommit.append(delivery, keep);
}

/** Whether the store can take a write now (readiness), without waiting on a lock. */
export async function probeReceiver(state: ReceiverState): Promise<ReadinessProbe> {
  const { life } = state;
  if (life.state === 'closing' || life.state === 'closed') return { ok: false, reason: 'shutting down' };
  if (life.state === 'failed') return { ok: false, reason: life.error.message };
  if (life.state === 'opening') return { ok: false, reason: 'the database is not open yet' };
  const { writeFailure } = life;
  if (writeFailure !== undefined && performance.now() - writeFailure.at < WRITE_FAILURE_HOLD_MS) {
    return { ok: false, reason: `webhook writes are failing (${writeFailure.code})` };
  }
  return await life.running.store.probe();
}

/** Stops what a receiver that failed to start had begun (its intake options were refused). */
export function abandon(state: ReceiverState): void {
  if (state.life.state === 'opening') state.life.cancel.abort();
  const running = runningOf(state);
  enter(state, { state: 'closed', running });
  if (running === undefined) return;
  // Fire and forget: the caller is throwing the refusal of its options. The store is closed with
  // or without a heartbeat, and a failure while stopping is logged, never left unhandled.
  running.accounts?.stop();
  const stop = async () => {
    try {
      await running.background?.stop(0);
      await running.presence?.stop();
    } finally {
      if (state.ownsStore) await running.store.close();
    }
  };
  void stop().catch((error: unknown) => state.logger.warn({ code: describeStorageError(error).code }, 'error while closing the database'));
}

/**
 * Stops accepting (new requests get 503), writes what is waiting, drains the dispatcher (up to
 * `timeoutMs`), and closes the database if the receiver opened it.
 */
export async function closeReceiver(state: ReceiverState, timeoutMs: number): Promise<void> {
  const { life } = state;
  if (life.state === 'closing' || life.state === 'closed') return;
  // A background open stops waiting now: no timer of it outlives close().
  if (life.state === 'opening') life.cancel.abort();
  const running = runningOf(state);
  if (running === undefined) return enter(state, { state: 'closed', running });
  enter(state, { state: 'closing', running });
  running.accounts?.stop();
  // Every step within what is left of `timeoutMs`; the (referenced) timers keep the process
  // alive until this resolves.
  const deadline = performance.now() + timeoutMs;
  const left = () => Math.max(0, deadline - performance.now());
  const within = async (work: Promise<unknown>, atMostMs = Infinity) =>
    void (await withDeadline(
      work.catch(() => undefined),
      Math.min(atMostMs, left()),
    ));
  // Commands stop handing events to this receiver first (those handed before are drained
  // below); a database that does not answer costs the drain a quarter of the time at most.
  // The background first, beside the drain below: the deliveries in flight get most of the time
  // (their answers settled, their leases given back) and the store stays open until they end.
  const background = within(running.background?.stop(Math.max(0, timeoutMs - Math.min(500, timeoutMs / 4))) ?? Promise.resolve());
  await within(running.presence?.stop() ?? Promise.resolve(), Math.min(500, timeoutMs / 4));
  await within(running.groupCommit.close());
  // The store's close is quick (a few milliseconds); keep time for it.
  await running.dispatcher.close(Math.max(0, left() - Math.min(100, timeoutMs / 4)));
  await within(state.eraseHooks.close(), Math.max(0, left() - Math.min(100, timeoutMs / 4)));
  await background;
  if (state.ownsStore) {
    await within(
      running.store
        .close()
        .catch((error: unknown) => state.logger.warn({ code: describeStorageError(error).code }, 'error while closing the database')),
    );
  }
  enter(state, { state: 'closed', running });
}
