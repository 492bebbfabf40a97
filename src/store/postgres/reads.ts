// Reads: one inbox row (by id, of any account), whether an account has anything pending (its
// counts are the counters', counters.ts), and this engine's SQL for the ports' reads (people, projected rows).
import type { EngineSql } from '../engine-sql.js';
import type { InboxRow } from '../rows.js';
import { asInboxRow, INBOX_COLUMNS } from './inbox-columns.js';
import { query, type Session } from './session.js';

export async function inboxRow(db: Session, id: number): Promise<InboxRow | undefined> {
  const [row] = await query(db, `SELECT ${INBOX_COLUMNS} FROM inbox WHERE inbox_id = $1`, [id]);
  return row === undefined ? undefined : asInboxRow(row);
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
