import type { Issue } from '../events/index.js';
import type { DeadLettersPort } from '../store/write-ports.js';
import type { HandlerFailureRow } from '../store/rows.js';

/** An event set aside: of a kind this version does not know, or whose data did not validate. */
export interface EventDeadLetter {
  /** Always `event`: tells it from a handler's. */
  type: 'event';
  /** Its inbox row. */
  inbox_id: number;
  /** `unknown`: a kind this version does not know; `dead`: its data did not validate, or the body is not an event. */
  state: 'unknown' | 'dead';
  /** The body's `event`, as sent (null when the body is not an envelope). */
  kind: string | null;
  /** How the body read (`accepted`, `invalid_json`, `invalid_envelope`). */
  verdict: string;
  /** When it was received: UTC ISO 8601. */
  received_at: string;
  /** What was wrong with it, path by path. */
  reasons: Issue[];
  /** The body as received (UTF-8 text). */
  body: string;
}

/** A handler that kept failing on a projected event. */
export type HandlerDeadLetter = { type: 'handler' } & HandlerFailureRow;

/** Something set aside: an event, or a handler call that kept failing. */
export type DeadLetter = EventDeadLetter | HandlerDeadLetter;

/** What was set aside, to list and reprocess after an upgrade or a fix (`receiver.deadLetters`). */
export interface DeadLetters {
  /** Events set aside, then failed handler calls, at most `limit` (default 1000) of each, oldest first. */
  list(limit?: number): Promise<DeadLetter[]>;
  /**
   * Puts set-aside events back in the work list (all, or by inbox id). Idempotent: projecting
   * an event twice changes nothing. Bodies that are not envelopes stay dead.
   */
  reprocess(ids: readonly number[] | 'all'): Promise<{ requeued: number[]; skipped: number[] }>;
  /** Runs the handlers of failed handler calls again (all, or by failure id). */
  retryHandlers(ids: readonly number[] | 'all'): Promise<{ retried: number[]; skipped: number[] }>;
}

/** Lists and reprocesses what was set aside, after an upgrade or a fix. */
export function prepareDeadLetters(store: DeadLettersPort, wake: () => void): DeadLetters {
  async function events(limit: number): Promise<EventDeadLetter[]> {
    return (await store.setAside(0, limit)).map((row) => ({
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
  async function handlers(limit: number): Promise<HandlerDeadLetter[]> {
    return (await store.handlerFailures(0, limit)).map((row) => ({ type: 'handler', ...row }));
  }
  return {
    async list(limit = 1000): Promise<DeadLetter[]> {
      return [...(await events(limit)), ...(await handlers(limit))];
    },
    /**
     * Puts set-aside events back in the work list (all, or by inbox id). Idempotent: projecting
     * an event twice changes nothing. Bodies that are not envelopes stay dead.
     */
    async reprocess(ids: readonly number[] | 'all'): Promise<{ requeued: number[]; skipped: number[] }> {
      const wanted = ids === 'all' ? (await store.setAside(0, Number.MAX_SAFE_INTEGER)).map((row) => row.inbox_id) : ids;
      const result = await store.requeue(wanted);
      if (result.requeued.length > 0) wake();
      return result;
    },
    /** Runs the handlers of failed handler calls again (all, or by failure id). */
    async retryHandlers(ids: readonly number[] | 'all'): Promise<{ retried: number[]; skipped: number[] }> {
      const wanted = ids === 'all' ? (await store.handlerFailures(0, Number.MAX_SAFE_INTEGER)).map((row) => row.failure_id) : ids;
      const result = await store.retryHandlerFailures(wanted);
      if (result.retried.length > 0) wake();
      return result;
    },
  };
}
