// Reads: one inbox row (by id, of any account), an account's counts by state and whether it has
// anything pending, and this engine's SQL for the ports' reads (people, projected rows).
import type { EngineSql } from '../engine-sql.js';
import type { InboxRow, InboxState } from '../store.js';
import { asInboxRow, INBOX_COLUMNS } from './inbox-columns.js';
import { query, type Session } from './session.js';

export async function inboxRow(db: Session, id: number): Promise<InboxRow | undefined> {
  const [row] = await query(db, `SELECT ${INBOX_COLUMNS} FROM inbox WHERE inbox_id = $1`, [id]);
  return row === undefined ? undefined : asInboxRow(row);
}

/** The account's inbox rows by state (every state present, 0 when none), and its handler failures. */
export async function counts(db: Session, account: string): Promise<Record<InboxState, number> & { handler_failures: number }> {
  const result = { pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: 0 } as Record<InboxState, number> & {
    handler_failures: number;
  };
  for (const { state, count } of await query<{ state: InboxState; count: number }>(
    db,
    'SELECT state, COUNT(*) AS count FROM inbox WHERE account = $1 GROUP BY state',
    [account],
  )) {
    result[state] = count;
  }
  const [failures] = await query<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM handler_failures WHERE account = $1', [account]);
  result.handler_failures = failures!.n;
  return result;
}

export async function hasPending(db: Session, account: string): Promise<boolean> {
  return (await query(db, "SELECT 1 FROM inbox WHERE account = $1 AND state = 'pending' LIMIT 1", [account])).length > 0;
}

/** Reads in this engine's SQL, on the pool or in the caller's transaction. */
export function postgresSql(db: Session): EngineSql {
  return {
    placeholder: (n) => `$${n}`,
    rows: async <T>(sql: string, parameters: readonly unknown[]) => (await query(db, sql, [...parameters])) as T[],
  };
}
