import type { Issue } from '../events/index.js';
import type { HandlerFailureRow, Inbox } from '../store/inbox.js';

/** An event set aside: of a kind this version does not know, or whose data did not validate. */
export interface EventDeadLetter {
  type: 'event';
  inbox_id: number;
  state: 'unknown' | 'dead';
  kind: string | null;
  verdict: string;
  received_at: string;
  reasons: Issue[];
  /** The body as received (UTF-8 text). */
  body: string;
}

/** A handler that kept failing on a projected event. */
export type HandlerDeadLetter = { type: 'handler' } & HandlerFailureRow;

export type DeadLetter = EventDeadLetter | HandlerDeadLetter;

/** Lists and reprocesses what was set aside, after an upgrade or a fix. */
export function prepareDeadLetters(inbox: Inbox, wake: () => void) {
  /** Applies `act` to each id: those it took, those it did not; wakes the dispatcher for the taken. */
  function partition(ids: readonly number[], act: (id: number) => boolean): [number[], number[]] {
    const taken: number[] = [];
    const skipped: number[] = [];
    for (const id of ids) (act(id) ? taken : skipped).push(id);
    if (taken.length > 0) wake();
    return [taken, skipped];
  }

  function events(limit: number): EventDeadLetter[] {
    return inbox.setAside(0, limit).map((row) => ({
      type: 'event',
      inbox_id: row.inbox_id,
      state: row.state as 'unknown' | 'dead',
      kind: row.kind,
      verdict: row.verdict,
      received_at: row.received_at,
      reasons: row.reasons === null ? [] : (JSON.parse(row.reasons) as Issue[]),
      body: Buffer.from(row.raw).toString('utf8'),
    }));
  }
  function handlers(limit: number): HandlerDeadLetter[] {
    return inbox.handlerFailures(0, limit).map((row) => ({ type: 'handler', ...row }));
  }
  return {
    list(limit = 1000): DeadLetter[] {
      return [...events(limit), ...handlers(limit)];
    },
    /**
     * Puts set-aside events back in the work list (all, or by inbox id). Idempotent: projecting
     * an event twice changes nothing. Bodies that are not envelopes stay dead.
     */
    reprocess(ids: readonly number[] | 'all'): { requeued: number[]; skipped: number[] } {
      const wanted = ids === 'all' ? inbox.setAside(0, Number.MAX_SAFE_INTEGER).map((row) => row.inbox_id) : ids;
      const [requeued, skipped] = partition(wanted, inbox.requeue);
      return { requeued, skipped };
    },
    /** Runs the handlers of failed handler calls again (all, or by failure id). */
    retryHandlers(ids: readonly number[] | 'all'): { retried: number[]; skipped: number[] } {
      const wanted = ids === 'all' ? inbox.handlerFailures(0, Number.MAX_SAFE_INTEGER).map((row) => row.failure_id) : ids;
      const [retried, skipped] = partition(wanted, inbox.retryHandlerFailure);
      return { retried, skipped };
    },
  };
}

export type DeadLetters = ReturnType<typeof prepareDeadLetters>;
