// What spans the accounts of one database (docs/projection.md section 9): which accounts have work
// waiting, and the removal of an account with every row it holds.
import type { AccountsWithWork } from '../rows.js';
import { prepared, type SqliteConnection } from './connection.js';

/**
 * The distinct accounts of a partial index led by the account, by a loose index scan: each step
 * seeks the first entry past the previous account, so an account with 100,000 pending rows costs
 * one probe, not 100,000 rows read.
 */
const distinctAccounts = (where: string) => `WITH RECURSIVE found (account) AS (
    SELECT (SELECT MIN(account) FROM inbox WHERE ${where})
    UNION ALL
    SELECT (SELECT MIN(account) FROM inbox WHERE ${where} AND account > found.account) FROM found WHERE found.account IS NOT NULL
  )
  SELECT account FROM found WHERE account IS NOT NULL`;

/** Accounts with rows pending projection, and accounts with rows whose handlers are due, each in account order. */
export function accountsWithWork(connection: SqliteConnection): AccountsWithWork {
  return {
    projection: prepared(connection, distinctAccounts("state = 'pending'")).pluck().all() as string[],
    handlers: prepared(connection, distinctAccounts('handlers_pending = 1')).pluck().all() as string[],
  };
}

// Children first: handler failures reference inbox rows, erasure hooks their erasures.
const DELETIONS = [
  'DELETE FROM handler_failures WHERE account = @account OR inbox_id IN (SELECT inbox_id FROM inbox WHERE account = @account)',
  'DELETE FROM erasure_hooks WHERE erasure_id IN (SELECT erasure_id FROM erasures WHERE account = @account)',
  'DELETE FROM erasures WHERE account = @account',
  'DELETE FROM interview_responses WHERE account = @account',
  'DELETE FROM candidates WHERE account = @account',
  'DELETE FROM campaigns WHERE account = @account',
  'DELETE FROM credits WHERE account = @account',
  // The feed's numbering goes on if the account comes back: a reader's cursor then learns (410)
  // that what it had not read is gone, and no number is given twice.
  'DELETE FROM changes WHERE account = @account',
  'DELETE FROM rebuild_campaigns WHERE account = @account',
  'DELETE FROM rebuild_candidates WHERE account = @account',
  'DELETE FROM rebuild_credits WHERE account = @account',
  'UPDATE change_heads SET dropped_through = last_seq WHERE account = @account',
  // Its destinations and their queues: a URL and secrets of an account that is gone.
  'DELETE FROM destination_deliveries WHERE account = @account',
  'DELETE FROM destinations WHERE account = @account',
  'DELETE FROM operator_events WHERE account = @account',
];

/** Deletes every row of the account, in every table, inside the caller's write transaction; how many inbox rows went. */
export function deleteAccountRows(connection: SqliteConnection, account: string): { inboxRows: number } {
  for (const sql of DELETIONS) prepared(connection, sql).run({ account });
  const inboxRows = prepared(connection, 'DELETE FROM inbox WHERE account = @account').run({ account }).changes;
  // Every counter of the account is at 0 by now (the triggers counted the deletions): its rows go too.
  prepared(connection, 'DELETE FROM counters WHERE account = @account').run({ account });
  return { inboxRows };
}
