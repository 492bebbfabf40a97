import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { AccountScope } from '../store/store.js';
import type { WorkSignals } from '../store/write-ports.js';
import { createHandlerPump, type HandlerPump, type HandlerPumpContext } from './handler-pump.js';
import type { HandlerRegistry } from './handlers.js';
import { dispatchSettings, type DispatcherOptions, type DispatchObserver } from './options.js';
import { createProjectionLoop, type ProjectionLoop, type ProjectionLoopContext } from './projection-loop.js';
import type { Tracing } from '../tracing/otel.js';
import type { Processed } from '../project/batch.js';
import { createKeptReadings } from './kept-readings.js';
import { withDeadline } from '../deadline.js';

export { HandlerTimeoutError } from './handler-calls.js';
export type { DispatcherOptions } from './options.js';

/** What the dispatcher's two parts use, and the wake-ups and pending check that drive them. */
type DispatchStore = ProjectionLoopContext['store'] & HandlerPumpContext['store'] & Pick<WorkSignals, 'onWork'>;

/** Whether any account has rows pending projection. */
async function anyPending(store: Pick<AccountScope, 'accountsWithWork'>): Promise<boolean> {
  return (await store.accountsWithWork()).projection.length > 0;
}

export interface DispatcherContext {
  store: DispatchStore;
  observer?: DispatchObserver;
  handlers: HandlerRegistry;
  logger: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
  /** Whether requests are waiting to be stored: projection then waits (up to 50 ms) for them. */
  intakeBusy?: () => boolean;
  /** OpenTelemetry "process" spans for projection batches and handler calls; none: no span. */
  tracing?: Tracing | undefined;
  /** The intake's readings of the bodies it stored in this process, taken by the projection. */
  readings?: ProjectionLoopContext['readings'];
}

/**
 * Takes stored inbox rows that are not processed yet (at start, as the intake commits them, when
 * another process announces work, and on a slow poll), projects them in batches (each batch's
 * rows and its inbox states in one transaction), then runs the application handlers. The inbox is
 * the queue: memory holds one batch and a bounded window of handler calls, however far behind
 * processing falls. Several processes may share one store: claims keep them out of each other's way.
 * Its two parts are projection-loop.ts and handler-pump.ts; this wires them to the wake-ups.
 */
export function createDispatcher(context: DispatcherContext, options: DispatcherOptions = {}) {
  const { store } = context;
  const settings = dispatchSettings(options);
  const now = context.now ?? Date.now;
  const owner = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const stopping = new AbortController();
  // Every handler call and retry delay listens for the stop, and each removes its listener when
  // done: hundreds at once are expected, not a leak worth Node's warning.
  setMaxListeners(0, stopping.signal);
  // The events projected here with handlers due, kept for the pump here: read and validated once.
  const projected = createKeptReadings<Processed>();
  const handlers = createHandlerPump({ ...context, now, owner, stopping: stopping.signal, projected }, settings);
  const projection = createProjectionLoop({ ...context, now, stopping: stopping.signal, handlersDue: handlers.pump, projected }, settings);

  // Work nobody announced (another process's, or a missed notification) is found by a slow poll.
  const poll = setInterval(() => {
    void anyPending(store).then(
      (pending) => {
        if (pending) projection.notify();
      },
      () => undefined,
    );
    handlers.pump();
  }, settings.pollMs);
  poll.unref();
  const unsubscribe = store.onWork(() => {
    projection.notify();
    handlers.pump();
  });

  const drain = () => drainAll(projection, handlers, store, stopping.signal);
  return {
    notify: projection.notify,
    /** Projects what is pending and starts the handlers still due. */
    start(): void {
      projection.notify();
      handlers.pump();
    },
    /** Resolves once every stored event is processed and every due handler call has finished. */
    drain,
    /**
     * Drains (up to `timeoutMs`), then stops: handlers still running or retrying are left due and
     * their claims given back, so that they run again (here at the next start, or in another process).
     */
    async close(timeoutMs = 5000): Promise<void> {
      await closeWithin(timeoutMs, {
        drain,
        stop() {
          stopping.abort();
          clearInterval(poll);
          unsubscribe();
          projection.clear();
          handlers.stop();
        },
        stopped: () => Promise.all([projection.onIdle(), handlers.callsIdle()]),
        finishing: handlers.finishing,
        releaseClaims: handlers.releaseClaims,
      });
    },
    /**
     * Whether this process is behind (readiness): its handler window is full, or as many handler
     * calls as it may run at once are stuck past their timeout.
     */
    saturated: (): boolean => handlers.saturated(),
    /** Handler calls abandoned at their timeout that have not settled since. */
    stuckHandlerCalls: (): number => handlers.stuckCalls(),
  };
}

/** Until every stored event is processed and every due handler call has finished (or the stop). */
async function drainAll(
  projection: ProjectionLoop,
  handlers: HandlerPump,
  store: Pick<AccountScope, 'accountsWithWork'>,
  stopping: AbortSignal,
): Promise<void> {
  for (;;) {
    await projection.onIdle();
    if (stopping.aborted) return;
    if (await anyPending(store)) {
      projection.notify();
      continue;
    }
    handlers.pump();
    await handlers.whenIdle();
    if (stopping.aborted) return;
    // Idle here: is there still due work nobody could claim yet (another key's turn came)?
    if ((await handlers.claimDue()) === 0 && !(await anyPending(store))) return;
  }
}

interface Closing {
  drain(): Promise<void>;
  /** Stops every timer, wake-up and claim; nothing new starts after it. */
  stop(): void;
  /** What was running when it stopped. */
  stopped(): Promise<unknown>;
  finishing(): Promise<unknown>;
  releaseClaims(): Promise<void>;
}

/** Drains, stops, waits for what runs, then hands the claims back, all by the deadline. */
async function closeWithin(timeoutMs: number, closing: Closing): Promise<void> {
  // Resolves by the deadline whatever the handlers do, and keeps the process alive until
  // then: the timers below are referenced on purpose.
  const deadline = performance.now() + timeoutMs;
  // Kept for the end: handing the claims back lets the next start (or another process) run
  // the handlers at once, rather than after their leases end.
  const reserve = Math.min(250, timeoutMs / 2);
  const left = (keep = 0) => Math.max(0, deadline - keep - performance.now());
  const within = async (work: Promise<unknown>, keep = 0) =>
    void (await withDeadline(
      work.catch(() => undefined),
      left(keep),
    ));
  await within(closing.drain(), reserve);
  closing.stop();
  await within(closing.stopped(), reserve / 2);
  await within(closing.finishing());
  await within(closing.releaseClaims());
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
