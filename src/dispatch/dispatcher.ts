import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { KIND_SUBJECTS, readEnvelope, type Issue, type WebhookEvent } from '../events/index.js';
import { projectBatch, readStored, type Processed } from '../project/batch.js';
import { createRowReaders } from '../project/read.js';
import { describeStorageError } from '../store/group-commit.js';
import { StoreUnavailableError, type InboxRow, type Settlement, type Store, type WriteTx } from '../store/store.js';
import type { HandlerContext, HandlerRegistry } from './handlers.js';

export interface DispatcherOptions {
  /** Events projected per transaction (the intake answers between batches). Default 64. */
  batchSize?: number;
  /** Handler calls running at once (across candidates). Default 8. */
  handlerConcurrency?: number;
  /** Events whose handlers may be in progress at once; bounds memory. Default 256. */
  handlerWindow?: number;
  /** Calls of a failing handler before it becomes a dead letter. Default 5. */
  handlerAttempts?: number;
  /** First retry delay of a failing handler (ms), doubled at each attempt. Default 100. */
  handlerRetryDelayMs?: number;
  /**
   * Longest one handler call may run (ms) before it counts as a failed attempt: its signal is
   * aborted, its concurrency slot given to others, and it is retried. Default 30000.
   */
  handlerTimeoutMs?: number;
  /**
   * How long this process's claim on an event's handlers holds without renewal (ms). Renewed while
   * they run; a process that dies loses its claims after this, and another takes them over. Default 15000.
   */
  handlerLeaseMs?: number;
  /** How often to look for work that no wake-up announced (ms): another process's, or a missed notification. Default 1000. */
  pollMs?: number;
}

/** Told what the dispatcher did (for metrics); each call is cheap and synchronous. */
export interface DispatchObserver {
  processed?(row: InboxRow, state: 'projected' | 'unknown' | 'dead', at: number): void;
  handlerCall?(handler: string, result: 'ok' | 'failed' | 'timeout'): void;
}

export interface DispatcherParts {
  store: Store;
  observer?: DispatchObserver;
  handlers: HandlerRegistry;
  logger: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
  /** Whether requests are waiting to be stored: projection then waits (up to 50 ms) for them. */
  intakeBusy?: () => boolean;
}

/** Longest the projection defers to waiting requests before it takes a batch anyway. */
const MAX_DEFER_MS = 50;

type Outcome = { row: InboxRow; processed: Processed; handlers: boolean };

/**
 * Takes stored inbox rows that are not processed yet (at start, as the intake commits them, when
 * another process announces work, and on a slow poll), projects them in batches (each batch's
 * rows and its inbox states in one transaction), then runs the application handlers. The inbox is
 * the queue: memory holds one batch and a bounded window of handler calls, however far behind
 * processing falls. Several processes may share one store: claims keep them out of each other's way.
 */
export function createDispatcher(parts: DispatcherParts, options: DispatcherOptions = {}) {
  const { store, handlers, logger } = parts;
  const now = parts.now ?? Date.now;
  const batchSize = options.batchSize ?? 64;
  const handlerWindow = options.handlerWindow ?? 256;
  const handlerAttempts = options.handlerAttempts ?? 5;
  const handlerRetryDelayMs = options.handlerRetryDelayMs ?? 100;
  const handlerTimeoutMs = options.handlerTimeoutMs ?? 30_000;
  const handlerConcurrency = options.handlerConcurrency ?? 8;
  const leaseMs = options.handlerLeaseMs ?? 15_000;
  const pollMs = options.pollMs ?? 1000;
  const owner = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const rows = createRowReaders(store);

  // One projection batch at a time in this process; other processes skip the rows it claimed.
  const projectionQueue = new PQueue({ concurrency: 1 });
  const handlerCalls = new PQueue({ concurrency: handlerConcurrency });
  // Calls abandoned at their timeout that have not settled since: they may hold resources.
  let stuckCalls = 0;
  const stopping = new AbortController();
  // Every handler call and retry delay listens for the stop, and each removes its listener when
  // done: hundreds at once are expected, not a leak worth Node's warning.
  setMaxListeners(0, stopping.signal);
  let projectionRequested = false;

  function settlementOf(row: InboxRow, processed: Processed): Outcome & { settlement: Settlement } {
    const wantsHandlers = processed.state === 'projected' && handlers.for(processed.event.event).length > 0;
    return {
      row,
      processed,
      handlers: wantsHandlers,
      settlement: {
        inboxId: row.inbox_id,
        state: processed.state,
        reasons: processed.state === 'projected' ? null : processed.issues,
        handlers: wantsHandlers,
      },
    };
  }

  async function projectClaimed(tx: WriteTx, limit: number): Promise<Outcome[]> {
    const claimed = await tx.claimPending(limit);
    if (claimed.length === 0) return [];
    const processed = await projectBatch(
      tx,
      claimed.map((row) => ({ raw: row.raw, reading: readEnvelope(row.raw, row.identity ?? undefined) })),
    );
    const outcomes = claimed.map((row, i) => settlementOf(row, processed[i]!));
    await tx.settle(outcomes.map((o) => o.settlement), new Date(now()).toISOString());
    return outcomes;
  }

  // A fault of one event (not of the store) must not hold back the others: the batch is taken
  // again one event per transaction, and the event that fails alone is set aside with the reason.
  async function isolateFaults(): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < batchSize; i++) {
      try {
        const one = await store.write((tx) => projectClaimed(tx, 1), { durable: false });
        if (one.length === 0) break;
        outcomes.push(...one);
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        const failed = await store.write(async (tx) => {
          const [row] = await tx.claimPending(1);
          if (row === undefined) return [];
          const issues: Issue[] = [{ path: '', message: `projection failed: ${(error as Error).message}` }];
          const outcome = settlementOf(row, { state: 'dead', kind: row.kind, issues });
          await tx.settle([outcome.settlement], new Date(now()).toISOString());
          return [outcome];
        });
        outcomes.push(...failed);
      }
    }
    return outcomes;
  }

  async function drainProjection(): Promise<void> {
    projectionRequested = false;
    let backoff = 25;
    let deferredSince: number | undefined;
    while (!stopping.signal.aborted) {
      // Answers first: a burst of webhooks is stored and acknowledged before it is projected,
      // and projection takes the gaps; under sustained load it still gets a batch every 50 ms.
      if (parts.intakeBusy?.() === true) {
        deferredSince ??= performance.now();
        if (performance.now() - deferredSince < MAX_DEFER_MS) {
          await delay(1);
          continue;
        }
      }
      deferredSince = undefined;
      let outcomes: Outcome[];
      try {
        try {
          outcomes = await store.write((tx) => projectClaimed(tx, batchSize), { durable: false });
        } catch (error) {
          if (error instanceof StoreUnavailableError) throw error;
          outcomes = await isolateFaults();
        }
      } catch (error) {
        const { code } = describeStorageError(error);
        logger.warn({ code, retryInMs: backoff }, 'projection batch failed; will retry');
        await delay(backoff, undefined, { signal: stopping.signal }).catch(() => undefined);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      backoff = 25;
      if (outcomes.length === 0) return;
      const at = now();
      for (const { row, processed } of outcomes) parts.observer?.processed?.(row, processed.state, at);
      for (const { row, processed } of outcomes) {
        if (processed.state !== 'projected') {
          logger.warn({ inboxId: row.inbox_id, kind: row.kind, state: processed.state, issues: processed.issues }, 'event set aside');
        }
      }
      if (outcomes.some((o) => o.handlers)) pumpHandlers();
      // Let the intake answer requests between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Asks for pending rows to be projected (coalesced: one drain at a time, one waiting). */
  function notify(): void {
    if (projectionRequested || stopping.signal.aborted) return;
    projectionRequested = true;
    void projectionQueue.add(drainProjection);
  }

  // Handlers: this process runs the rows it claimed, each the first due row of its key (candidate,
  // campaign or account), so one key's handlers run one at a time, in inbox order, across processes.
  const running = new Set<number>();
  // What follows each row's handlers: recording them done, or handing the claim back.
  const finishingRows = new Set<Promise<void>>();
  let pumping = false;
  let pumpAgain = false;
  const idleWaiters: Array<() => void> = [];

  function pumpHandlers(): void {
    if (handlers.size === 0 || stopping.signal.aborted) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    void (async () => {
      try {
        do {
          pumpAgain = false;
          if (running.size >= handlerWindow) break;
          const due = await store.claimHandlers({ owner, limit: handlerWindow - running.size, leaseMs, running });
          for (const row of due) startHandlers(row);
          if (due.length > 0) pumpAgain = true; // the window may take more, and keys may have moved on
        } while (pumpAgain && !stopping.signal.aborted);
      } catch (error) {
        logger.warn({ code: describeStorageError(error).code }, 'could not claim handler work; will retry');
      } finally {
        pumping = false;
        settleIdle();
      }
    })();
  }

  function startHandlers(row: InboxRow): void {
    const processed = readStored(row.raw, readEnvelope(row.raw, row.identity ?? undefined));
    running.add(row.inbox_id);
    const run =
      processed.state === 'projected' ? callHandlers(row.inbox_id, processed.identity, processed.event) : Promise.resolve(true);
    const finishing = run
      .then(async (finished) => {
        // Stopped before the end: the claim is handed back, so the handlers run again at once
        // (at the next start, or in another process) rather than when the lease ends.
        if (finished) await store.handlersDone(row.inbox_id);
        else await store.releaseHandlers(owner, [row.inbox_id]);
      })
      .catch((error: unknown) => {
        // The mark stays set: the handlers run again once the lease ends (at least once).
        logger.warn({ inboxId: row.inbox_id, code: describeStorageError(error).code }, 'could not record handlers as done; they will run again');
      })
      .finally(() => {
        running.delete(row.inbox_id);
        finishingRows.delete(finishing);
        pumpHandlers();
        settleIdle();
      });
    finishingRows.add(finishing);
  }

  async function rowFor(event: WebhookEvent): Promise<unknown> {
    const data = event.data as { candidate_id?: string; campaign_id?: string };
    const subject = KIND_SUBJECTS[event.event];
    if (subject === 'candidate') return await rows.candidate(data.candidate_id!);
    if (subject === 'campaign') return await rows.campaign(data.campaign_id!);
    return await rows.credits();
  }

  /**
   * One call, within its timeout. The slot is given back at the timeout whether or not the call
   * settles; a call still running then is counted as stuck until it settles.
   */
  function callOnce(run: (signal: AbortSignal) => unknown): Promise<unknown> {
    const controller = new AbortController();
    return handlerCalls.add(
      () =>
        new Promise((resolve, reject) => {
          let abandoned = false;
          // Abandoned at the timeout (counted as stuck until it settles), or when the receiver
          // stops: either way its signal is aborted and no timer of ours outlives it.
          const abandon = (error: Error, stuck: boolean) => {
            if (abandoned) return;
            abandoned = true;
            clearTimeout(timer);
            stopping.signal.removeEventListener('abort', onStop);
            if (stuck) stuckCalls++;
            countedStuck = stuck;
            controller.abort(error);
            reject(error);
          };
          let countedStuck = false;
          const timer = setTimeout(() => abandon(new HandlerTimeoutError(handlerTimeoutMs), true), handlerTimeoutMs);
          const onStop = () => abandon(new Error('the receiver stopped'), false);
          stopping.signal.addEventListener('abort', onStop, { once: true });
          const settled = () => {
            if (countedStuck) stuckCalls--;
            if (abandoned) return false;
            abandoned = true;
            clearTimeout(timer);
            stopping.signal.removeEventListener('abort', onStop);
            return true;
          };
          Promise.resolve()
            .then(() => run(controller.signal))
            .then(
              (value) => settled() && resolve(value),
              (error: unknown) => settled() && reject(error),
            );
        }),
    );
  }

  /** Calls every handler of the event; false when stopped before the end (the handlers stay due). */
  async function callHandlers(inboxId: number, identity: string, event: WebhookEvent): Promise<boolean> {
    for (const handler of handlers.for(event.event)) {
      for (let attempt = 1; ; attempt++) {
        try {
          const row = (await rowFor(event)) as never;
          await callOnce((signal: AbortSignal) => handler.run(event, { identity, inboxId, attempt, row, signal } satisfies HandlerContext));
          parts.observer?.handlerCall?.(handler.name, 'ok');
          break;
        } catch (error) {
          parts.observer?.handlerCall?.(handler.name, error instanceof HandlerTimeoutError ? 'timeout' : 'failed');
          const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          if (attempt >= handlerAttempts || stopping.signal.aborted) {
            if (!stopping.signal.aborted) {
              await store.recordHandlerFailure({ inbox_id: inboxId, handler: handler.name, error: message, attempts: attempt, failed_at: new Date(now()).toISOString() });
              logger.error({ inboxId, handler: handler.name, attempts: attempt }, 'handler failed; recorded as a dead letter');
            }
            break;
          }
          await delay(handlerRetryDelayMs * 2 ** (attempt - 1), undefined, { signal: stopping.signal }).catch(() => undefined);
        }
      }
      if (stopping.signal.aborted) return false;
    }
    return true;
  }

  function settleIdle(): void {
    if (running.size > 0 || pumping) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  }

  // Claims are renewed while their handlers run; work nobody announced is found by a slow poll.
  const renewal = setInterval(() => {
    if (running.size > 0) void store.renewHandlerClaims(owner, [...running], leaseMs).catch(() => undefined);
  }, Math.max(100, Math.floor(leaseMs / 3)));
  renewal.unref();
  const poll = setInterval(() => {
    void store.hasPending().then(
      (pending) => {
        if (pending) notify();
      },
      () => undefined,
    );
    pumpHandlers();
  }, pollMs);
  poll.unref();
  const unsubscribe = store.onWork(() => {
    notify();
    pumpHandlers();
  });

  async function drain(): Promise<void> {
    for (;;) {
      await projectionQueue.onIdle();
      if (stopping.signal.aborted) return;
      if (await store.hasPending()) {
        notify();
        continue;
      }
      pumpHandlers();
      await new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
      if (stopping.signal.aborted) return;
      // Idle here: is there still due work nobody could claim yet (another key's turn came)?
      const due = handlers.size === 0 ? [] : await store.claimHandlers({ owner, limit: handlerWindow, leaseMs, running });
      if (due.length === 0 && !(await store.hasPending())) return;
      for (const row of due) startHandlers(row);
    }
  }

  return {
    notify,
    /** Projects what is pending and starts the handlers still due. */
    start(): void {
      notify();
      pumpHandlers();
    },
    /** Resolves once every stored event is processed and every due handler call has finished. */
    drain,
    /**
     * Drains (up to `timeoutMs`), then stops: handlers still running or retrying are left due and
     * their claims given back, so that they run again (here at the next start, or in another process).
     */
    async close(timeoutMs = 5000): Promise<void> {
      // Resolves by the deadline whatever the handlers do, and keeps the process alive until
      // then: the timers below are referenced on purpose.
      const deadline = performance.now() + timeoutMs;
      // Kept for the end: handing the claims back lets the next start (or another process) run
      // the handlers at once, rather than after their leases end.
      const reserve = Math.min(250, timeoutMs / 2);
      const left = (keep = 0) => Math.max(0, deadline - keep - performance.now());
      const within = async (work: Promise<unknown>, keep = 0) => {
        const timeout = new AbortController();
        await Promise.race([work.catch(() => undefined), delay(left(keep), undefined, { signal: timeout.signal }).catch(() => undefined)]);
        timeout.abort();
      };
      await within(drain(), reserve);
      stopping.abort();
      clearInterval(renewal);
      clearInterval(poll);
      unsubscribe();
      projectionQueue.clear();
      for (const resolve of idleWaiters.splice(0)) resolve();
      await within(Promise.all([projectionQueue.onIdle(), handlerCalls.onIdle()]), reserve / 2);
      await within(Promise.all([...finishingRows]));
      await within(store.releaseHandlers(owner, [...running]));
    },
    /**
     * Whether this process is behind (readiness): its handler window is full, or as many handler
     * calls as it may run at once are stuck past their timeout.
     */
    saturated: (): boolean => running.size >= handlerWindow || stuckCalls >= handlerConcurrency,
    /** Handler calls abandoned at their timeout that have not settled since. */
    stuckHandlerCalls: (): number => stuckCalls,
  };
}

/** A handler call that outlived `handlerTimeoutMs`: a failed attempt, retried like an exception. */
export class HandlerTimeoutError extends Error {
  override name = 'HandlerTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the handler did not settle within ${timeoutMs} ms`);
  }
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
