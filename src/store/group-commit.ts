import type { Delivery, StoreOutcome } from '../receive/delivery.js';
import type { Appended, Inbox } from './inbox.js';
import type { SqliteDatabase } from './sqlite/database.js';

export interface GroupCommitOptions {
  /** Told the inbox ids of new (non-duplicate) rows once their transaction has committed. */
  onCommitted?: (inboxIds: number[]) => void;
}

/**
 * Group commit: every delivery that arrives while the event loop is busy (with a commit, or
 * with other requests) waits for the next turn and is written in one transaction with the
 * others, so one fsync serves many acknowledgements. No promise resolves before the
 * transaction holding its row has committed; if the transaction fails, every delivery in it
 * is told so, and none is acknowledged.
 */
export function createGroupCommit(db: SqliteDatabase, inbox: Inbox, options: GroupCommitOptions = {}) {
  let waiting: Array<{ delivery: Delivery; settle: (outcome: StoreOutcome) => void }> = [];
  let scheduled = false;
  let closed = false;

  const writeBatch = db.transaction((deliveries: Delivery[]) => deliveries.map((d) => inbox.append(d)));

  function flush(): void {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    let results: Appended[];
    try {
      results = writeBatch.immediate(batch.map((w) => w.delivery));
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
    if (fresh.length > 0) options.onCommitted?.(fresh);
  }

  return {
    append(delivery: Delivery): Promise<StoreOutcome> {
      if (closed) return Promise.resolve({ ok: false, code: 'CLOSED', message: 'the inbox is closed' });
      return new Promise((settle) => {
        waiting.push({ delivery, settle });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    /** Deliveries waiting for the next commit: requests the intake has not answered yet. */
    waiting: (): number => waiting.length,
    /** Writes what is waiting now, then refuses new deliveries. */
    close(): void {
      flush();
      closed = true;
    },
  };
}

export type GroupCommit = ReturnType<typeof createGroupCommit>;

/** SQLite's code (SQLITE_BUSY, SQLITE_FULL, SQLITE_READONLY …) for logs; never the data. */
export function describeStorageError(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown })?.code;
  return {
    code: typeof code === 'string' ? code : 'STORAGE_ERROR',
    message: error instanceof Error ? error.message : String(error),
  };
}
