import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { parseEvent, readEnvelope, type Issue, type WebhookEvent } from '../events/index.js';
import { prepareRowReaders } from '../project/read.js';
import type { Projection } from '../project/write.js';
import type { SqliteDatabase } from '../store/sqlite/database.js';
import { describeStorageError } from '../store/group-commit.js';
import type { Inbox, InboxRow } from '../store/inbox.js';
import { orderingKey, type HandlerContext, type HandlerRegistry } from './handlers.js';
import { processDelivery } from './process.js';

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
}

export interface DispatcherParts {
  db: SqliteDatabase;
  inbox: Inbox;
  projection: Projection;
  handlers: HandlerRegistry;
  logger: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
  /** Whether requests are waiting to be stored: projection then waits (up to 50 ms) for them. */
  intakeBusy?: () => boolean;
}

/** Longest the projection defers to waiting requests before it takes a batch anyway. */
const MAX_DEFER_MS = 50;

// SQLite says "try again" with these; anything else in a projection is a fault of the event.
const TRANSIENT = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|PROTOCOL|NOMEM)/;
const isTransient = (error: unknown) => TRANSIENT.test(describeStorageError(error).code);

/**
 * Takes stored inbox rows that are not processed yet (at start, and as the intake commits them),
 * projects them in batches (each event's projection and its inbox state in one transaction),
 * then runs the application handlers. The inbox is the queue: memory holds one batch and a
 * bounded window of handler calls, however far behind processing falls.
 */
export function createDispatcher(parts: DispatcherParts, options: DispatcherOptions = {}) {
  const { db, inbox, projection, handlers, logger } = parts;
  const now = parts.now ?? Date.now;
  const batchSize = options.batchSize ?? 64;
  const handlerWindow = options.handlerWindow ?? 256;
  const handlerAttempts = options.handlerAttempts ?? 5;
  const handlerRetryDelayMs = options.handlerRetryDelayMs ?? 100;
  const rows = prepareRowReaders(db);

  // One projection batch at a time: SQLite has one writer, and order within a batch is free.
  const projectionQueue = new PQueue({ concurrency: 1 });
  const handlerCalls = new PQueue({ concurrency: options.handlerConcurrency ?? 8 });
  const stopping = new AbortController();
  let projectionRequested = false;

  type Outcome = { row: InboxRow; state: 'projected' | 'unknown' | 'dead'; issues: Issue[] | null; handlers: boolean };

  // A savepoint per event: a fault in one event's projection leaves the others intact.
  const projectOne = db.transaction((row: InboxRow, at: string): Outcome => {
    const processed = processDelivery(projection, row.raw, readEnvelope(row.raw, row.identity ?? undefined));
    const withHandlers = processed.state === 'projected' && handlers.for(processed.event.event).length > 0;
    const issues = processed.state === 'projected' ? null : processed.issues;
    inbox.settle(row.inbox_id, processed.state, issues, at, withHandlers);
    return { row, state: processed.state, issues, handlers: withHandlers };
  });

  const projectBatch = db.transaction((batch: InboxRow[]): Outcome[] => {
    const at = new Date(now()).toISOString();
    return batch.map((row) => {
      try {
        return projectOne(row, at);
      } catch (error) {
        if (isTransient(error)) throw error;
        const issues = [{ path: '', message: `projection failed: ${(error as Error).message}` }];
        inbox.settle(row.inbox_id, 'dead', issues, at);
        return { row, state: 'dead', issues, handlers: false };
      }
    });
  });

  // A projection batch needs no fsync of its own: if power fails before the next synchronous
  // commit, its rows are simply pending again and projected anew (idempotent). Acknowledged
  // inbox rows are always committed with synchronous = FULL by the intake, whose fsync also
  // persists every earlier transaction in the WAL.
  const synchronousNormal = db.prepare('PRAGMA synchronous = NORMAL');
  const synchronousFull = db.prepare('PRAGMA synchronous = FULL');
  function withoutFsync<T>(run: () => T): T {
    synchronousNormal.run();
    try {
      return run();
    } finally {
      synchronousFull.run();
    }
  }

  async function drainProjection(): Promise<void> {
    projectionRequested = false;
    let afterId = 0;
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
      const batch = inbox.pending(afterId, batchSize);
      if (batch.length === 0) return;
      let outcomes: Outcome[];
      try {
        outcomes = withoutFsync(() => projectBatch.immediate(batch));
      } catch (error) {
        const { code } = describeStorageError(error);
        logger.warn({ code, retryInMs: backoff }, 'projection batch failed; will retry');
        await delay(backoff, undefined, { signal: stopping.signal }).catch(() => undefined);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      backoff = 25;
      afterId = batch.at(-1)!.inbox_id;
      for (const outcome of outcomes) {
        if (outcome.state !== 'projected') {
          logger.warn({ inboxId: outcome.row.inbox_id, kind: outcome.row.kind, state: outcome.state, issues: outcome.issues }, 'event set aside');
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

  // Handler window: rows marked handlers_pending, taken in inbox order, chained per candidate.
  const chains = new Map<string, Promise<void>>();
  const started = new Set<number>();
  let handlerCursor = 0;
  let inFlight = 0;
  let pumping = false;
  let pumpAgain = false;
  const idleWaiters: Array<() => void> = [];

  function pumpHandlers(): void {
    if (handlers.size === 0) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        while (inFlight < handlerWindow && !stopping.signal.aborted) {
          const due = inbox.handlersPending(handlerCursor, handlerWindow - inFlight);
          if (due.length === 0) break;
          for (const row of due) {
            handlerCursor = row.inbox_id;
            if (!started.has(row.inbox_id)) startHandlers(row);
          }
        }
      } while (pumpAgain);
    } finally {
      pumping = false;
    }
    settleIdle();
  }

  function startHandlers(row: InboxRow): void {
    const envelope = readEnvelope(row.raw, row.identity ?? undefined);
    const reading = envelope.ok ? parseEvent(envelope.envelope) : null;
    if (!envelope.ok || reading === null || !reading.ok) {
      inbox.handlersDone(row.inbox_id);
      return;
    }
    const event = reading.event;
    const key = orderingKey(event);
    inFlight++;
    started.add(row.inbox_id);
    const previous = chains.get(key) ?? Promise.resolve();
    const run = previous.then(() => callHandlers(row.inbox_id, envelope.identity, event));
    chains.set(key, run);
    void run.finally(() => {
      if (chains.get(key) === run) chains.delete(key);
      started.delete(row.inbox_id);
      inFlight--;
      pumpHandlers();
    });
  }

  function rowFor(event: WebhookEvent): unknown {
    const data = event.data as { candidate_id?: string; campaign_id?: string };
    if (event.event.startsWith('candidate.')) return rows.candidate(data.candidate_id!);
    if (event.event.startsWith('campaign.')) return rows.campaign(data.campaign_id!);
    return rows.credits();
  }

  async function callHandlers(inboxId: number, identity: string, event: WebhookEvent): Promise<void> {
    for (const handler of handlers.for(event.event)) {
      for (let attempt = 1; ; attempt++) {
        try {
          const context: HandlerContext = { identity, inboxId, attempt, row: rowFor(event) as never };
          await handlerCalls.add(() => handler.run(event, context));
          break;
        } catch (error) {
          const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          if (attempt >= handlerAttempts || stopping.signal.aborted) {
            if (!stopping.signal.aborted) {
              inbox.recordHandlerFailure(inboxId, handler.name, message, attempt, new Date(now()).toISOString());
              logger.error({ inboxId, handler: handler.name, attempts: attempt }, 'handler failed; recorded as a dead letter');
            }
            break;
          }
          await delay(handlerRetryDelayMs * 2 ** (attempt - 1), undefined, { signal: stopping.signal }).catch(() => undefined);
        }
      }
      if (stopping.signal.aborted) return; // leave handlers_pending set: they run again at the next start
    }
    inbox.handlersDone(inboxId);
  }

  function settleIdle(): void {
    if (inFlight > 0) return;
    for (const resolve of idleWaiters.splice(0)) resolve();
  }

  async function drain(): Promise<void> {
    for (;;) {
      await projectionQueue.onIdle();
      if (stopping.signal.aborted) return;
      if (inbox.pending(0, 1).length > 0) {
        notify();
        continue;
      }
      pumpHandlers();
      if (inFlight === 0) return;
      await new Promise<void>((resolve) => idleWaiters.push(resolve));
    }
  }

  return {
    notify,
    /** Projects what is pending and (re)starts the handlers still marked, from the first. */
    start(): void {
      notify();
      handlerCursor = 0;
      pumpHandlers();
    },
    /** Resolves once every stored event is processed and every handler call has finished. */
    drain,
    /**
     * Drains (up to `timeoutMs`), then stops: handlers still retrying are left marked and run
     * again at the next start. Call after the intake has stopped accepting.
     */
    async close(timeoutMs = 5000): Promise<void> {
      const timeout = new AbortController();
      await Promise.race([drain(), delay(timeoutMs, undefined, { signal: timeout.signal }).catch(() => undefined)]);
      timeout.abort();
      stopping.abort();
      projectionQueue.clear();
      for (const resolve of idleWaiters.splice(0)) resolve();
      await Promise.race([
        Promise.all([projectionQueue.onIdle(), handlerCalls.onIdle()]),
        delay(1000, undefined, { ref: false }),
      ]);
    },
    /** Whether the handler window is full (readiness: the process is behind). */
    saturated: (): boolean => inFlight >= handlerWindow,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
