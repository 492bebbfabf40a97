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
      const wanted = ids === 'all' ? events(Number.MAX_SAFE_INTEGER).map((d) => d.inbox_id) : ids;
      const requeued: number[] = [];
      const skipped: number[] = [];
      for (const id of wanted) (inbox.requeue(id) ? requeued : skipped).push(id);
      if (requeued.length > 0) wake();
      return { requeued, skipped };
    },
    /** Runs the handlers of failed handler calls again (all, or by failure id). */
    retryHandlers(ids: readonly number[] | 'all'): { retried: number[]; skipped: number[] } {
      const wanted = ids === 'all' ? handlers(Number.MAX_SAFE_INTEGER).map((d) => d.failure_id) : ids;
      const retried: number[] = [];
      const skipped: number[] = [];
      for (const id of wanted) (inbox.retryHandlerFailure(id) ? retried : skipped).push(id);
      if (retried.length > 0) wake();
      return { retried, skipped };
    },
  };
}

export type DeadLetters = ReturnType<typeof prepareDeadLetters>;
