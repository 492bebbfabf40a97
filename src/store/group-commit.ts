import type { Delivery, StoreOutcome } from '../receive/delivery.js';
import { StoreUnavailableError, type Appended, type Store } from './store.js';

export interface GroupCommitOptions {
  /** Told the inbox ids of new (non-duplicate) rows once their transaction has committed. */
  onCommitted?: (inboxIds: number[]) => void;
}

/**
 * Group commit: the deliveries that arrive while the event loop is busy, or while the previous
 * commit is in flight, are written together in the next transaction, so one fsync (or one round
 * trip) serves many acknowledgements. No promise resolves before the transaction holding its row
 * has committed; if the transaction fails, every delivery in it is told so, and none is acknowledged.
 */
export function createGroupCommit(store: Store, options: GroupCommitOptions = {}) {
  let waiting: Array<{ delivery: Delivery; settle: (outcome: StoreOutcome) => void }> = [];
  let scheduled = false;
  let inFlight: Promise<void> | undefined;
  let closed = false;

  function schedule(): void {
    if (scheduled || inFlight !== undefined || waiting.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      inFlight = commit().finally(() => {
        inFlight = undefined;
        schedule(); // what arrived during this commit goes in the next
      });
    });
  }

  async function commit(): Promise<void> {
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    let results: Appended[];
    try {
      results = await store.write((tx) => tx.append(batch.map((w) => w.delivery)));
    } catch (error) {
      const failure = describeStorageError(error);
      for (const w of batch) w.settle({ ok: false, ...failure });
      return;
    }
    const fresh: number[] = [];
    batch.forEach((w, i) => {
      const result = results[i]!;
      if (!result.duplicate) fresh.push(result.inboxId);
      w.settle({ ok: true, ...result });
    });
    if (fresh.length > 0) {
      store.announceWork();
      options.onCommitted?.(fresh);
    }
  }

  return {
    append(delivery: Delivery): Promise<StoreOutcome> {
      if (closed) return Promise.resolve({ ok: false, code: 'CLOSED', message: 'the inbox is closed' });
      return new Promise((settle) => {
        waiting.push({ delivery, settle });
        schedule();
      });
    },
    /** Deliveries waiting for a commit: requests the intake has not answered yet. */
    waiting: (): number => waiting.length + (inFlight === undefined ? 0 : 1),
    /** Writes what is waiting now, then refuses new deliveries. */
    async close(): Promise<void> {
      closed = true;
      await inFlight;
      if (waiting.length > 0) await commit();
    },
  };
}

export type GroupCommit = ReturnType<typeof createGroupCommit>;

/** The engine's code (SQLITE_BUSY, ECONNREFUSED, 53100 …) for logs and the 503's details; never the data. */
export function describeStorageError(error: unknown): { code: string; message: string } {
  if (error instanceof StoreUnavailableError) return { code: error.code, message: error.message };
  const code = (error as { code?: unknown })?.code;
  return {
    code: typeof code === 'string' ? code : 'STORAGE_ERROR',
    message: error instanceof Error ? error.message : String(error),
  };
}
