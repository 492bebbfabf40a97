// Handler bookkeeping: a row's handlers done, the failures recorded, listed and retried. A failure
// carries its row's account; listing and retrying reach the view's account only.
import type { QueryResultRow } from 'pg';
import type { HandlerFailureRow } from '../rows.js';
import { inTransaction, query, type Engine, type Session } from './session.js';

/** Every handler of the row succeeded or was given up on: its mark and lease are cleared. */
export async function handlersDone(db: Session, id: number): Promise<void> {
  await query(db, 'UPDATE inbox SET handlers_pending = false, handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = $1', [
    id,
  ]);
}

/** Records a handler's failure under the account of its row. */
export async function recordHandlerFailure(db: Session, f: Omit<HandlerFailureRow, 'failure_id'>): Promise<void> {
  await query(
    db,
    `INSERT INTO handler_failures (account, inbox_id, handler, error, attempts, failed_at)
     SELECT account, inbox_id, $2, $3, $4, $5 FROM inbox WHERE inbox_id = $1`,
    [f.inbox_id, f.handler, f.error, f.attempts, f.failed_at],
  );
}

/** The account's handler failures after `afterId`, by failure id. */
export async function handlerFailures(db: Session, account: string, afterId: number, limit: number): Promise<HandlerFailureRow[]> {
  return await query<HandlerFailureRow & QueryResultRow>(
    db,
    `SELECT failure_id, inbox_id, handler, error, attempts, failed_at FROM handler_failures
     WHERE account = $1 AND failure_id > $2 ORDER BY failure_id LIMIT $3`,
    [account, afterId, limit],
  );
}

/** Forgets these failures of the account and marks their (projected) events for the handlers again, in one transaction. */
export async function retryHandlerFailures(
  engine: Engine,
  account: string,
  ids: readonly number[],
): Promise<{ retried: number[]; skipped: number[] }> {
  return await inTransaction(engine, async (tx) => {
    const forgotten = await query<{ failure_id: number; inbox_id: number }>(
      tx,
      'DELETE FROM handler_failures WHERE failure_id = ANY($1::bigint[]) AND account = $2 RETURNING failure_id, inbox_id',
      [ids, account],
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
