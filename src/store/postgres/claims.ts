// Claims and leases. Pending rows are claimed for a projection transaction with row locks
// (FOR UPDATE SKIP LOCKED: another process skips them, and they are pending again if this one dies
// before committing), then settled in it. Handler work is claimed with a lease that outlives the
// statement, renewed while the handlers run and given back on shutdown. A claim takes one
// account's rows; what is done by inbox id (settling, leases) reaches the row whatever its account.
import type { HandlerClaimOptions } from '../write-ports.js';
import type { InboxRow, Settlement } from '../rows.js';
import { asInboxRow, INBOX_COLUMNS, INBOX_COLUMNS_OF_INBOX } from './inbox-columns.js';
import { replaceBodies } from './erasure.js';
import { query, type Session } from './session.js';

/** Up to `limit` pending rows of the account, oldest first, locked until the transaction `tx` ends. */
export async function claimPending(tx: Session, account: string, limit: number): Promise<InboxRow[]> {
  const rows = await query(
    tx,
    `SELECT ${INBOX_COLUMNS} FROM inbox WHERE account = $1 AND state = 'pending' ORDER BY inbox_id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [account, limit],
  );
  return rows.map(asInboxRow);
}

/** This row (of any account: ids are unique across them) if it is still pending and no other transaction holds it, locked until `tx` ends. */
export async function claimPendingRow(tx: Session, inboxId: number): Promise<InboxRow | undefined> {
  const rows = await query(tx, `SELECT ${INBOX_COLUMNS} FROM inbox WHERE inbox_id = $1 AND state = 'pending' FOR UPDATE SKIP LOCKED`, [
    inboxId,
  ]);
  return rows.map(asInboxRow)[0];
}

/** Records how claimed rows were processed; `keepHandlers` leaves their handler marks as they are (a rebuild). */
export async function settle(
  tx: Session,
  settlements: readonly Settlement[],
  at: string,
  options: { keepHandlers?: boolean } = {},
): Promise<void> {
  if (settlements.length === 0) return;
  const handlers = options.keepHandlers ? '' : 'handlers_pending = v.handlers,';
  await query(
    tx,
    `UPDATE inbox SET state = v.state, reasons = v.reasons, processed_at = $5::timestamptz,
       ${handlers} attempts = inbox.attempts + 1
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::boolean[]) AS v(inbox_id, state, reasons, handlers)
     WHERE inbox.inbox_id = v.inbox_id`,
    [
      settlements.map((s) => s.inboxId),
      settlements.map((s) => s.state),
      settlements.map((s) => (s.reasons === null ? null : JSON.stringify(s.reasons))),
      settlements.map((s) => s.handlers),
      at,
    ],
  );
  // An erased candidate's event, redacted when processed.
  await replaceBodies(
    tx,
    settlements.flatMap((s) => (s.raw === undefined ? [] : [{ inboxId: s.inboxId, raw: s.raw }])),
  );
}

/**
 * Rows of the account whose handlers are due, first of their handler key within the account (no
 * earlier row of the key pending projection or with handlers due), not under a live lease nor
 * already run by `owner`: leased to `owner` for `leaseMs`, by inbox id.
 */
export async function claimHandlers(db: Session, account: string, claim: HandlerClaimOptions): Promise<InboxRow[]> {
  const rows = await query(
    db,
    `WITH due AS (
       SELECT i.inbox_id FROM inbox i
       WHERE i.account = $5 AND i.handlers_pending AND (i.handlers_lease_until IS NULL OR i.handlers_lease_until < now())
         -- The look-back stops at the oldest row still unsettled, however many rows the key has (credits).
         AND NOT EXISTS (SELECT 1 FROM inbox j WHERE j.account = $5 AND j.handler_key = i.handler_key AND j.inbox_id < i.inbox_id
                           AND j.inbox_id >= LEAST((SELECT min(inbox_id) FROM inbox WHERE account = $5 AND state = 'pending'),
                                                   (SELECT min(inbox_id) FROM inbox WHERE account = $5 AND handlers_pending))
                           AND (j.handlers_pending OR j.state = 'pending'))
         AND NOT (i.inbox_id = ANY($3::bigint[]))
       ORDER BY i.inbox_id LIMIT $2
       FOR UPDATE SKIP LOCKED)
     UPDATE inbox SET handlers_owner = $1, handlers_lease_until = now() + $4 * interval '1 millisecond'
     FROM due WHERE inbox.inbox_id = due.inbox_id
     RETURNING ${INBOX_COLUMNS_OF_INBOX}`,
    [claim.owner, claim.limit, [...claim.running], claim.leaseMs, account],
  );
  return rows.map(asInboxRow).sort((a, b) => a.inbox_id - b.inbox_id);
}

/** Extends the leases `owner` holds on these rows (while their handlers still run). */
export async function renewHandlerClaims(db: Session, owner: string, ids: readonly number[], leaseMs: number): Promise<void> {
  if (ids.length === 0) return;
  await query(
    db,
    `UPDATE inbox SET handlers_lease_until = now() + $3 * interval '1 millisecond'
     WHERE inbox_id = ANY($1::bigint[]) AND handlers_owner = $2 AND handlers_pending`,
    [ids, owner, leaseMs],
  );
}

/** Gives `owner`'s leases back unrun (shutting down): the rows' handlers are due again at once. */
export async function releaseHandlers(db: Session, owner: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await query(
    db,
    'UPDATE inbox SET handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = ANY($1::bigint[]) AND handlers_owner = $2',
    [ids, owner],
  );
}
