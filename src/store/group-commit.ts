import type { Delivery, StoreOutcome } from '../receive/delivery.js';
import { describeStorageError } from './errors.js';
import type { Appended } from './rows.js';
import type { IntakePort, WorkSignals } from './write-ports.js';

export interface GroupCommitOptions {
  /** Told the inbox ids of new (non-duplicate) rows once their transaction has committed. */
  onCommitted?: (inboxIds: number[]) => void;
  /** Told how each transaction ended: `undefined` once committed, else the store's code (its deliveries get 503). */
  onOutcome?: (failure: string | undefined) => void;
  /**
   * Longest a delivery waits for its commit before it is told the store is unavailable (ms), so
   * that the sender gets its 503 within its own 5 s. The write may still commit later: the
   * sender's retry is then a duplicate, acknowledged. Default 4000.
   */
  deadlineMs?: number;
}

/** Appends in transactions of their own, then tells other processes there is work. */
type GroupCommitStore = IntakePort & Pick<WorkSignals, 'announceWork'>;

interface Waiting {
  delivery: Delivery;
  /** Told its new row's inbox id as soon as the commit is known, before any other work can claim the row here. */
  onStored: ((inboxId: number) => void) | undefined;
  settle: (outcome: StoreOutcome) => void;
}

/** The state of one group commit: what waits, what is being written. */
interface Batching {
  readonly store: GroupCommitStore;
  readonly options: GroupCommitOptions;
  readonly deadlineMs: number;
  waiting: Waiting[];
  scheduled: boolean;
  inFlight: number;
  readonly commits: Set<Promise<void>>;
  closed: boolean;
}

/**
 * Group commit: the deliveries that arrive while the event loop is busy, or while the store's
 * writers are all busy, are written together in the next transaction, so one fsync (or one round
 * trip) serves many acknowledgements. No promise resolves ok before the transaction holding its row
 * has committed; if the transaction fails, every delivery in it is told so, and none is acknowledged.
 */
export function createGroupCommit(store: GroupCommitStore, options: GroupCommitOptions = {}) {
  const state: Batching = {
    store,
    options,
    deadlineMs: options.deadlineMs ?? 4000,
    waiting: [],
    scheduled: false,
    inFlight: 0,
    commits: new Set(),
    closed: false,
  };
  return {
    /** Resolves once the delivery is written (or is known not to be); `onStored` is told its new row's id first. */
    append: (delivery: Delivery, onStored?: (inboxId: number) => void): Promise<StoreOutcome> => append(state, delivery, onStored),
    /** Deliveries waiting for a commit: requests the intake has not answered yet. */
    waiting: (): number => state.waiting.length + state.inFlight,
    /** Writes what is waiting now, then refuses new deliveries. */
    async close(): Promise<void> {
      state.closed = true;
      const batch = state.waiting;
      state.waiting = [];
      await Promise.all([...state.commits, ...(batch.length > 0 ? [commitBatch(state, batch)] : [])]);
    },
  };
}

function append(state: Batching, delivery: Delivery, onStored: ((inboxId: number) => void) | undefined): Promise<StoreOutcome> {
  if (state.closed) return Promise.resolve({ ok: false, code: 'CLOSED', message: 'the inbox is closed' });
  return new Promise((resolve) => {
    let settled = false;
    // Settled once: by the commit, or by the deadline, whichever comes first.
    const settle = (outcome: StoreOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    state.waiting.push({ delivery, onStored, settle });
    schedule(state);
  });
}

/** Starts the next transaction on the next turn, unless one is due or every writer is busy. */
function schedule(state: Batching): void {
  if (state.scheduled || state.inFlight >= state.store.writeConcurrency || state.waiting.length === 0) return;
  state.scheduled = true;
  setImmediate(() => {
    state.scheduled = false;
    const batch = state.waiting;
    state.waiting = [];
    if (batch.length === 0) return;
    state.inFlight++;
    const commit = commitBatch(state, batch).finally(() => {
      state.inFlight--;
      state.commits.delete(commit);
      schedule(state); // what arrived during this commit goes in the next
    });
    state.commits.add(commit);
    schedule(state);
  });
}

/** One transaction for the batch; each delivery told its outcome once it committed or failed. */
async function commitBatch(state: Batching, batch: Waiting[]): Promise<void> {
  const { store, options, deadlineMs } = state;
  const timer = setTimeout(() => {
    for (const w of batch) w.settle({ ok: false, code: 'TIMEOUT', message: `the store did not confirm the write within ${deadlineMs} ms` });
  }, deadlineMs);
  let results: Appended[];
  try {
    results = await store.append(batch.map((w) => w.delivery));
  } catch (error) {
    const failure = describeStorageError(error);
    for (const w of batch) w.settle({ ok: false, ...failure });
    options.onOutcome?.(failure.code);
    return;
  } finally {
    clearTimeout(timer);
  }
  options.onOutcome?.(undefined);
  const fresh: number[] = [];
  batch.forEach((w, i) => {
    const result = results[i]!;
    if (!result.duplicate) {
      fresh.push(result.inboxId);
      w.onStored?.(result.inboxId);
    }
    w.settle({ ok: true, ...result });
  });
  if (fresh.length > 0) {
    store.announceWork();
    options.onCommitted?.(fresh);
  }
}

export type GroupCommit = ReturnType<typeof createGroupCommit>;
