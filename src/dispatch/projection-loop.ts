// The dispatcher's first part: takes pending inbox rows in batches and projects them, each batch's
// rows and its inbox states in one transaction (claim, fold, write, settle).
import { setTimeout as delay } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { readEnvelope, type EnvelopeReading, type Issue } from '../events/index.js';
import { projectBatch, type Processed } from '../project/batch.js';
import { settlementsOf } from '../project/settlement.js';
import { describeStorageError, StoreUnavailableError } from '../store/errors.js';
import type { ClaimsTx, ProjectionWritesTx, Transactions } from '../store/write-ports.js';
import type { InboxRow, AccountsWithWork } from '../store/rows.js';
import type { HandlerRegistry } from './handlers.js';
import type { DispatchObserver } from './options.js';
import type { KeptReadings } from './kept-readings.js';
import type { Tracing } from '../tracing/otel.js';
import { recordProjection } from './spans.js';

/** The part of a write transaction a projection batch uses: claims, then the projected rows. */
type ProjectionTx = ClaimsTx & ProjectionWritesTx;

/** The accounts' transactions, and which accounts have rows pending: batches take the accounts in turn. */
interface AccountTransactions<Tx extends object> {
  forAccount(account: string): Transactions<Tx>;
  accountsWithWork(): Promise<AccountsWithWork>;
}

export interface ProjectionLoopContext {
  store: AccountTransactions<ProjectionTx>;
  /** Which kinds have handlers: their projected events are settled with handlers due. */
  handlers: Pick<HandlerRegistry, 'for'>;
  logger: Pick<Logger, 'warn'>;
  observer?: DispatchObserver | undefined;
  now: () => number;
  /** Whether requests are waiting to be stored: projection then waits (up to 50 ms) for them. */
  intakeBusy?: (() => boolean) | undefined;
  /** Aborted when the dispatcher stops: no batch starts after it. */
  stopping: AbortSignal;
  /** Called after a batch that left some event's handlers due. */
  handlersDue: () => void;
  tracing?: Tracing | undefined;
  /** The intake's readings of the bodies it stored in this process: a row read there is not read again. */
  readings?: Pick<KeptReadings<EnvelopeReading>, 'take'> | undefined;
  /** Where the events projected with handlers due are kept for the handler pump, which then reads and validates them no more. */
  projected?: Pick<KeptReadings<Processed>, 'keep'> | undefined;
}

/** Longest the projection defers to waiting requests before it takes a batch anyway. */
const MAX_DEFER_MS = 50;
/**
 * A batch taken after deferring that long is this many times the batch size: what arrived
 * meanwhile, so that projection keeps up with an intake that is never idle (under sustained load,
 * requests nearly always wait to be stored).
 */
const CATCH_UP_BATCHES = 8;

type Outcome = { row: InboxRow; processed: Processed; handlers: boolean };

interface Batches {
  loop: ProjectionLoopContext;
  /** The account whose rows this batch takes. */
  store: Transactions<ProjectionTx>;
  batchSize: number;
}

/** Settles claimed rows as they were processed, in the caller's transaction. */
async function settleClaimed(
  loop: ProjectionLoopContext,
  tx: ClaimsTx,
  rows: readonly InboxRow[],
  processed: readonly Processed[],
): Promise<Outcome[]> {
  const settlements = settlementsOf(rows, processed, (kind) => loop.handlers.for(kind).length > 0);
  await tx.settle(settlements, new Date(loop.now()).toISOString());
  return rows.map((row, i) => ({ row, processed: processed[i]!, handlers: settlements[i]!.handlers }));
}

async function projectClaimed(loop: ProjectionLoopContext, tx: ProjectionTx, claimed: readonly InboxRow[]): Promise<Outcome[]> {
  if (claimed.length === 0) return [];
  const processed = await projectBatch(
    tx,
    claimed.map((row) => ({
      raw: row.raw,
      reading: loop.readings?.take(row) ?? readEnvelope(row.raw, row.identity ?? undefined),
      reasons: row.reasons,
    })),
  );
  return await settleClaimed(loop, tx, claimed, processed);
}

/**
 * Sets aside the row whose projection failed, by its id: the oldest pending row may be another by
 * now (requeued, or the failing one held by a replica). A row no longer pending, or held by another
 * process, is left to that process.
 */
async function setAsideFailed({ loop, store }: Batches, inboxId: number, error: unknown): Promise<Outcome[]> {
  return await store.write(async (tx) => {
    const row = await tx.claimPendingRow(inboxId);
    if (row === undefined) return [];
    const issues: Issue[] = [{ path: '', message: `projection failed: ${(error as Error).message}` }];
    return await settleClaimed(loop, tx, [row], [{ state: 'dead', kind: row.kind, issues }]);
  });
}

// A fault of one event (not of the store) must not hold back the others: the batch is taken
// again one event per transaction, and the event that fails alone is set aside with the reason.
async function isolateFaults(batches: Batches): Promise<Outcome[]> {
  const { loop, store, batchSize } = batches;
  const outcomes: Outcome[] = [];
  for (let i = 0; i < batchSize; i++) {
    let claimed: number | undefined;
    try {
      const one = await store.write(
        async (tx) => {
          const rows = await tx.claimPending(1);
          claimed = rows[0]?.inbox_id;
          return await projectClaimed(loop, tx, rows);
        },
        { durable: false },
      );
      if (one.length === 0) break;
      outcomes.push(...one);
    } catch (error) {
      // Nothing claimed: the claim itself failed, and the batch is retried as a store fault is.
      if (error instanceof StoreUnavailableError || claimed === undefined) throw error;
      outcomes.push(...(await setAsideFailed(batches, claimed, error)));
    }
  }
  return outcomes;
}

/** One batch of up to `limit` rows, or the same rows one by one when the batch fails for a reason other than the store. */
async function projectOneBatch(batches: Batches, limit: number): Promise<Outcome[]> {
  try {
    return await batches.store.write(async (tx) => await projectClaimed(batches.loop, tx, await tx.claimPending(limit)), {
      durable: false,
    });
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    return await isolateFaults(batches);
  }
}

/** Hands the handler pump the events it will run handlers for, as projected (the bytes a redacted event settled with differ: not kept). */
function keepForHandlers(loop: ProjectionLoopContext, outcomes: readonly Outcome[]): void {
  if (loop.projected === undefined) return;
  for (const { row, processed, handlers } of outcomes) {
    if (handlers && processed.state === 'projected' && processed.redacted === undefined && row.identity !== null)
      loop.projected.keep(row.inbox_id, row.raw, row.identity, processed);
  }
}

function reportOutcomes(loop: ProjectionLoopContext, outcomes: readonly Outcome[]): void {
  const at = loop.now();
  for (const { row, processed } of outcomes) loop.observer?.processed?.(row, processed.state, at);
  for (const { row, processed } of outcomes) {
    if (processed.state !== 'projected') {
      loop.logger.warn({ inboxId: row.inbox_id, kind: row.kind, state: processed.state, issues: processed.issues }, 'event set aside');
    }
  }
}

/**
 * Projects batches until none is pending (or the dispatcher stops); a failing store is retried with
 * backoff. Accounts take turns, a batch each, in rounds: a round is the accounts that had rows pending
 * when it began, so a backlog in one account delays another's events by one batch at most.
 */
async function drainPending(loop: ProjectionLoopContext, batchSize: number): Promise<void> {
  let backoff = 25;
  let deferredSince: number | undefined;
  let round: string[] = [];
  // A round that projected nothing (its rows held by other processes) ends the drain, as an empty batch did.
  let roundProjected = true;
  while (!loop.stopping.aborted) {
    // Answers first: a burst of webhooks is stored and acknowledged before it is projected,
    // and projection takes the gaps; under sustained load it still gets a larger batch every 50 ms.
    let limit = batchSize;
    if (loop.intakeBusy?.() === true) {
      deferredSince ??= performance.now();
      if (performance.now() - deferredSince < MAX_DEFER_MS) {
        await delay(1);
        continue;
      }
      limit = batchSize * CATCH_UP_BATCHES;
    }
    deferredSince = undefined;
    let outcomes: Outcome[];
    const startedAt = loop.tracing === undefined ? 0 : Date.now();
    try {
      if (round.length === 0) {
        if (!roundProjected) return;
        round = (await loop.store.accountsWithWork()).projection;
        roundProjected = false;
      }
      const account = round.shift();
      if (account === undefined) return;
      outcomes = await projectOneBatch({ loop, store: loop.store.forAccount(account), batchSize }, limit);
    } catch (error) {
      const { code } = describeStorageError(error);
      loop.logger.warn({ code, retryInMs: backoff }, 'projection batch failed; will retry');
      await delay(backoff, undefined, { signal: loop.stopping }).catch(() => undefined);
      backoff = Math.min(backoff * 2, 5000);
      continue;
    }
    backoff = 25;
    if (outcomes.length === 0) continue;
    roundProjected = true;
    keepForHandlers(loop, outcomes);
    if (loop.tracing !== undefined)
      recordProjection(
        loop.tracing,
        startedAt,
        outcomes.map((o) => ({ row: o.row, state: o.processed.state })),
      );
    reportOutcomes(loop, outcomes);
    if (outcomes.some((o) => o.handlers)) loop.handlersDue();
    // Let the intake answer requests between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * One drain at a time in this process (other processes skip the rows it claimed), and at most one
 * asked for while it runs: a wake-up during a drain is served by the drain that follows.
 */
export function createProjectionLoop(loop: ProjectionLoopContext, options: { batchSize: number }) {
  const queue = new PQueue({ concurrency: 1 });
  let requested = false;
  return {
    /** Asks for pending rows to be projected (coalesced: one drain at a time, one waiting). */
    notify: (): void => {
      if (requested || loop.stopping.aborted) return;
      requested = true;
      void queue.add(() => {
        requested = false;
        return drainPending(loop, options.batchSize);
      });
    },
    /** Resolves once no drain runs or waits. */
    onIdle: (): Promise<void> => queue.onIdle(),
    /** Drops the drain that waits (stopping). */
    clear: (): void => queue.clear(),
  };
}

export type ProjectionLoop = ReturnType<typeof createProjectionLoop>;
