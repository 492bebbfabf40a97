// Reads of the inbox and of the projected tables (the counts are the counters', counters.ts). Each statement is prepared at its first use: a
// read-only store (the CLI's inspect) prepares no write, and a query the caller never runs costs nothing.
// A row by inbox id is read whatever its account; the other reads are of the account they bind.
import type { EngineSql } from '../engine-sql.js';
import type { InboxRow } from '../rows.js';
import { prepared, read, type SqliteConnection } from './connection.js';
import { INBOX_SELECT, inboxRowOf } from './inbox.js';
import { KEY_BLOCKS_SQL } from '../handler-keys.js';

export function inboxRowById(connection: SqliteConnection, id: number): InboxRow | undefined {
  const row = prepared(connection, `${INBOX_SELECT} WHERE inbox_id = ?`).raw(true).get(id) as unknown[] | undefined;
  return row === undefined ? undefined : inboxRowOf(row);
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
    keyBlocks: KEY_BLOCKS_SQL,
    rows: queued ? (sql, parameters) => read(connection, () => rows(sql, parameters)) : rows,
  };
}
