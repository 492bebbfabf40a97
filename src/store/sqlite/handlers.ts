// Handler bookkeeping: claims of the rows whose handlers are due, under leases that a process
// renews while it runs them and gives back when it stops; failures recorded, listed and retried.
// Claims, lists and retries are of one account (its handler keys order its rows only); leases and
// settlements are by inbox id, whatever the account.
import type { Statement } from 'better-sqlite3';
import type { HandlerClaimOptions } from '../write-ports.js';
import type { HandlerFailureRow, InboxRow } from '../rows.js';
import { prepared, type SqliteConnection } from './connection.js';
import type { SqliteDatabase } from './database.js';
import { INBOX_SELECT, inboxRowOf } from './inbox.js';

export interface HandlerStatements {
  due: Statement;
  lease: Statement;
  renew: Statement;
  release: Statement;
  done: Statement;
  recordFailure: Statement;
  failureById: Statement;
  forgetFailure: Statement;
  rerun: Statement;
}

/**
 * The account's oldest row still pending projection or with handlers due: no row before it can
 * hold a claim back, so a key's look-back stops there however many rows the key has (`credits`).
 */
const UNSETTLED_FLOOR = `min(ifnull((SELECT inbox_id FROM inbox WHERE account = ? AND state = 'pending' ORDER BY inbox_id LIMIT 1), 1e18),
  ifnull((SELECT inbox_id FROM inbox WHERE account = ? AND handlers_pending = 1 ORDER BY inbox_id LIMIT 1), 1e18))`;

const FAILURE_COLUMNS = 'failure_id, inbox_id, handler, error, attempts, failed_at';

export function prepareHandlers(db: SqliteDatabase): HandlerStatements {
  return {
    due: db
      .prepare(
        `${INBOX_SELECT.replace('FROM inbox', 'FROM inbox i')}
       WHERE i.account = ? AND i.handlers_pending = 1 AND (i.handlers_lease_until IS NULL OR i.handlers_lease_until < ?)
         AND NOT EXISTS (SELECT 1 FROM inbox j WHERE j.account = i.account AND j.handler_key = i.handler_key AND j.inbox_id < i.inbox_id
                           AND j.inbox_id >= ${UNSETTLED_FLOOR} AND (j.handlers_pending = 1 OR j.state = 'pending'))
       ORDER BY i.inbox_id LIMIT ?`,
      )
      .raw(true),
    lease: db.prepare('UPDATE inbox SET handlers_owner = ?, handlers_lease_until = ? WHERE inbox_id = ?'),
    renew: db.prepare('UPDATE inbox SET handlers_lease_until = ? WHERE inbox_id = ? AND handlers_owner = ? AND handlers_pending = 1'),
    release: db.prepare('UPDATE inbox SET handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = ? AND handlers_owner = ?'),
    done: db.prepare('UPDATE inbox SET handlers_pending = 0, handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = ?'),
    // Under its event's account, whichever view records it (a row that is not there fails its foreign key, as before).
    recordFailure: db.prepare(
      `INSERT INTO handler_failures (account, inbox_id, handler, error, attempts, failed_at)
       VALUES (COALESCE((SELECT account FROM inbox WHERE inbox_id = ?), 'default'), ?, ?, ?, ?, ?)`,
    ),
    failureById: db.prepare(`SELECT ${FAILURE_COLUMNS} FROM handler_failures WHERE failure_id = ? AND account = ?`),
    forgetFailure: db.prepare('DELETE FROM handler_failures WHERE failure_id = ?'),
    rerun: db.prepare(
      `UPDATE inbox SET handlers_pending = 1, handlers_owner = NULL, handlers_lease_until = NULL WHERE inbox_id = ? AND state = 'projected'`,
    ),
  };
}

/** The account's rows whose handlers are due and come first for their key, not leased by a live claim nor run here already; leased to `owner`. */
export function claimHandlers(s: HandlerStatements, account: string, claim: HandlerClaimOptions): InboxRow[] {
  const now = Date.now();
  const due = (s.due.all(account, now, account, account, claim.limit + claim.running.size) as unknown[][]).map(inboxRowOf);
  const taken = due.filter((row) => !claim.running.has(row.inbox_id)).slice(0, claim.limit);
  for (const row of taken) s.lease.run(claim.owner, now + claim.leaseMs, row.inbox_id);
  return taken;
}

/** Extends the leases `owner` holds on these rows. */
export function renewHandlerClaims(s: HandlerStatements, owner: string, ids: readonly number[], leaseMs: number): void {
  const until = Date.now() + leaseMs;
  for (const id of ids) s.renew.run(until, id, owner);
}

/** Every handler of the row succeeded or was given up on. */
export function handlersDone(s: HandlerStatements, id: number): void {
  s.done.run(id);
}

/** Gives claims back without running them: the rows' handlers are due again at once. */
export function releaseHandlers(s: HandlerStatements, owner: string, ids: readonly number[]): void {
  for (const id of ids) s.release.run(id, owner);
}

export function recordHandlerFailure(s: HandlerStatements, f: Omit<HandlerFailureRow, 'failure_id'>): void {
  s.recordFailure.run(f.inbox_id, f.inbox_id, f.handler, f.error, f.attempts, f.failed_at);
}

/** The account's handler failures by id (a read: prepared at first use, as a read-only store has no write statements). */
export function handlerFailures(connection: SqliteConnection, account: string, afterId: number, limit: number): HandlerFailureRow[] {
  return prepared(
    connection,
    `SELECT ${FAILURE_COLUMNS} FROM handler_failures WHERE account = ? AND failure_id > ? ORDER BY failure_id LIMIT ?`,
  ).all(account, afterId, limit) as HandlerFailureRow[];
}

/** Forgets these failures of the account and marks their events for the handlers again. */
export function retryHandlerFailures(
  s: HandlerStatements,
  account: string,
  ids: readonly number[],
): { retried: number[]; skipped: number[] } {
  const retried: number[] = [];
  const skipped: number[] = [];
  for (const id of ids) {
    const failure = s.failureById.get(id, account) as HandlerFailureRow | undefined;
    if (failure === undefined) {
      skipped.push(id);
      continue;
    }
    s.forgetFailure.run(id);
    s.rerun.run(failure.inbox_id);
    retried.push(id);
  }
  return { retried, skipped };
}
