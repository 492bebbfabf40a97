// Handler bookkeeping: a row's handlers done, the failures recorded, listed and retried.
import type { QueryResultRow } from 'pg';
import type { HandlerFailureRow } from '../store.js';
import { inTransaction, query, type Engine, type Session } from './session.js';

/** Every handler of the row succeeded or was given up on: its mark and lease are cleared. */
export async function handlersDone(db: Session, id: number): Promise<void> {
  await query(db, 'UPDATE inbox SET handlers_pending = false, handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = $1', [
    id,
  ]);
}

export async function recordHandlerFailure(db: Session, f: Omit<HandlerFailureRow, 'failure_id'>): Promise<void> {
  await query(db, 'INSERT INTO handler_failures (inbox_id, handler, error, attempts, failed_at) VALUES ($1, $2, $3, $4, $5)', [
    f.inbox_id,
    f.handler,
    f.error,
    f.attempts,
    f.failed_at,
  ]);
}

/** Handler failures after `afterId`, by failure id. */
export async function handlerFailures(db: Session, afterId: number, limit: number): Promise<HandlerFailureRow[]> {
  return await query<HandlerFailureRow & QueryResultRow>(
    db,
    'SELECT * FROM handler_failures WHERE failure_id > $1 ORDER BY failure_id LIMIT $2',
    [afterId, limit],
  );
}

/** Forgets these failures and marks their (projected) events for the handlers again, in one transaction. */
export async function retryHandlerFailures(engine: Engine, ids: readonly number[]): Promise<{ retried: number[]; skipped: number[] }> {
  return await inTransaction(engine, async (tx) => {
    const forgotten = await query<{ failure_id: number; inbox_id: number }>(
      tx,
      'DELETE FROM handler_failures WHERE failure_id = ANY($1::bigint[]) RETURNING failure_id, inbox_id',
      [ids],
    );
    await query(
      tx,
      `UPDATE inbox SET handlers_pending = true, handlers_owner = NULL, handlers_lease_until = NULL
       WHERE inbox_id = ANY($1::bigint[]) AND state = 'projected'`,
      [forgotten.map((f) => f.inbox_id)],
    );
    const done = new Set(forgotten.map((f) => f.failure_id));
    return { retried: ids.filter((id) => done.has(id)), skipped: ids.filter((id) => !done.has(id)) };
  });
}
