// Accounts across the database (docs/projection.md section 9): which have work waiting, and the
// removal of one account's rows.
import type { AccountsWithWork } from '../rows.js';
import { query, type Session } from './session.js';

/**
 * The distinct accounts of a partial index's rows, by a loose index scan: each step asks for the
 * smallest account above the previous one, one probe of the index led by account, so that 100,000
 * rows waiting in one account cost as little as one.
 */
const distinctAccounts = (name: string, where: string) => `${name}(account) AS (
    SELECT min(account) FROM inbox WHERE ${where}
    UNION ALL
    SELECT (SELECT min(account) FROM inbox WHERE ${where} AND account > ${name}.account) FROM ${name} WHERE ${name}.account IS NOT NULL)`;

/** Accounts with rows pending projection, and accounts with rows whose handlers are due, each in account order. */
export async function accountsWithWork(db: Session): Promise<AccountsWithWork> {
  const [row] = await query<{ projection: string[] | null; handlers: string[] | null }>(
    db,
    `WITH RECURSIVE ${distinctAccounts('projection', "state = 'pending'")}, ${distinctAccounts('handlers', 'handlers_pending')}
     SELECT (SELECT array_agg(account ORDER BY account) FROM projection WHERE account IS NOT NULL) AS projection,
            (SELECT array_agg(account ORDER BY account) FROM handlers WHERE account IS NOT NULL) AS handlers`,
  );
  return { projection: row?.projection ?? [], handlers: row?.handlers ?? [] };
}

/**
 * Deletes every row of the account, in every table, inside the caller's transaction; returns how
 * many inbox rows went. Handler failures first (they reference the inbox), then the inbox, whose
 * row locks make a projection of the account that holds some finish first, then what it projected.
 */
export async function deleteAccountRows(tx: Session, account: string): Promise<{ inboxRows: number }> {
  await query(tx, 'DELETE FROM handler_failures WHERE account = $1', [account]);
  const [deleted] = await query<{ n: number }>(
    tx,
    'WITH gone AS (DELETE FROM inbox WHERE account = $1 RETURNING 1) SELECT COUNT(*)::int AS n FROM gone',
    [account],
  );
  for (const table of ['interview_responses', 'candidates', 'campaigns', 'credits']) {
    await query(tx, `DELETE FROM ${table} WHERE account = $1`, [account]);
  }
  await query(tx, 'DELETE FROM erasure_hooks WHERE erasure_id IN (SELECT erasure_id FROM erasures WHERE account = $1)', [account]);
  await query(tx, 'DELETE FROM erasures WHERE account = $1', [account]);
  // The feed's numbering goes on if the account comes back: a reader's cursor then learns (410)
  // that what it had not read is gone, and no number is given twice.
  // Its destinations, their queues and its operator events too: a URL and secrets of an account that is gone.
  const tables = [
    'changes',
    'rebuild_campaigns',
    'rebuild_candidates',
    'rebuild_credits',
    'destination_deliveries',
    'destinations',
    'operator_events',
  ];
  for (const table of tables) {
    await query(tx, `DELETE FROM ${table} WHERE account = $1`, [account]);
  }
  await query(tx, 'UPDATE change_heads SET dropped_through = last_seq WHERE account = $1', [account]);
  // Every counter of the account is at 0 by now (the triggers counted the deletions): its rows go
  // too, every process's (a transaction of the account still running adds a row of its own later).
  await query(tx, 'DELETE FROM counters WHERE account = $1', [account]);
  return { inboxRows: deleted!.n };
}
