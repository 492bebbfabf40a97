// Dead letters: the rows set aside (unknown kinds, refused or invalid bodies), and putting
// envelopes back to pending; of one account.
import type { InboxRow } from '../rows.js';
import { asInboxRow, INBOX_COLUMNS } from './inbox-columns.js';
import { query, type Session } from './session.js';

/** Unknown and dead rows of the account after `afterId`, by inbox id. */
export async function setAside(db: Session, account: string, afterId: number, limit: number): Promise<InboxRow[]> {
  const rows = await query(
    db,
    `SELECT ${INBOX_COLUMNS} FROM inbox WHERE account = $1 AND state IN ('unknown', 'dead') AND inbox_id > $2 ORDER BY inbox_id LIMIT $3`,
    [account, afterId, limit],
  );
  return rows.map(asInboxRow);
}

/**
 * Puts the account's unknown or dead envelopes back to pending; bodies that are not envelopes (not
 * accepted), and rows of other accounts, are skipped.
 */
export async function requeue(db: Session, account: string, ids: readonly number[]): Promise<{ requeued: number[]; skipped: number[] }> {
  const rows = await query<{ inbox_id: number }>(
    db,
    `UPDATE inbox SET state = 'pending'
     WHERE inbox_id = ANY($1::bigint[]) AND account = $2 AND state IN ('unknown', 'dead') AND verdict = 'accepted'
     RETURNING inbox_id`,
    [ids, account],
  );
  const done = new Set(rows.map((r) => r.inbox_id));
  return { requeued: ids.filter((id) => done.has(id)), skipped: ids.filter((id) => !done.has(id)) };
}
