// Reads of the inbox and of the projected tables. Each statement is prepared at its first use: a
// read-only store (the CLI's inspect) prepares no write, and a query the caller never runs costs nothing.
// A row by inbox id is read whatever its account; the other reads are of the account they bind.
import type { EngineSql } from '../engine-sql.js';
import type { InboxRow, InboxState } from '../store.js';
import { prepared, read, type SqliteConnection } from './connection.js';
import { INBOX_SELECT, inboxRowOf } from './inbox.js';

export function inboxRowById(connection: SqliteConnection, id: number): InboxRow | undefined {
  const row = prepared(connection, `${INBOX_SELECT} WHERE inbox_id = ?`).raw(true).get(id) as unknown[] | undefined;
  return row === undefined ? undefined : inboxRowOf(row);
}

export type InboxCounts = Record<InboxState, number> & { handler_failures: number };

/** How many of the account's inbox rows are in each state, and how many of its handler failures are kept. */
export function counts(connection: SqliteConnection, account: string): InboxCounts {
  const result = { pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: 0 } as InboxCounts;
  const byState = prepared(connection, 'SELECT state, COUNT(*) AS count FROM inbox WHERE account = ? GROUP BY state').all(account);
  for (const { state, count } of byState as Array<{ state: InboxState; count: number }>) result[state] = count;
  result.handler_failures = prepared(connection, 'SELECT COUNT(*) AS n FROM handler_failures WHERE account = ?')
    .pluck()
    .get(account) as number;
  return result;
}

export function hasPending(connection: SqliteConnection, account: string): boolean {
  return prepared(connection, "SELECT 1 FROM inbox WHERE account = ? AND state = 'pending' LIMIT 1").get(account) !== undefined;
}

/** The account's unknown and dead rows after `afterId`, by inbox id. */
export function setAside(connection: SqliteConnection, account: string, afterId: number, limit: number): InboxRow[] {
  return (
    prepared(connection, `${INBOX_SELECT} WHERE account = ? AND state IN ('unknown', 'dead') AND inbox_id > ? ORDER BY inbox_id LIMIT ?`)
      .raw(true)
      .all(account, afterId, limit) as unknown[][]
  ).map(inboxRowOf);
}

/** Reads in this engine's SQL inside the caller's write transaction (synchronous), or, `queued`, as the store's reads are. */
export function sqliteSql(connection: SqliteConnection, queued = false): EngineSql {
  const rows = <T>(sql: string, parameters: readonly unknown[]) => prepared(connection, sql).all(...parameters) as T[];
  return {
    placeholder: () => '?',
    rows: queued ? (sql, parameters) => read(connection, () => rows(sql, parameters)) : rows,
  };
}
