// The counters on SQLite (migration 016): read, and counted again from the rows. One writer, so
// one row per counter; the triggers keep them.
import { fullCountSql, inboxCountsOf, inboxCountsSql, type InboxCounts } from '../counters.js';
import type { Statement } from 'better-sqlite3';
import { prepared, type SqliteConnection } from './connection.js';
import type { SqliteDatabase } from './database.js';

/** A score in the counters' units, rounded half up (scores are never negative): as the triggers compute it. */
const sqliteScoreUnits = (score: string): string => `CAST(${score} * 1000000000 + 0.5 AS INTEGER)`;

/** How many of the account's inbox rows are in each state, and how many of its handler failures are kept. */
export function counts(connection: SqliteConnection, account: string): InboxCounts {
  return inboxCountsOf(prepared(connection, inboxCountsSql('?')).all(account) as Array<{ name: string; key: string; n: number }>);
}

export interface RecountStatements {
  clear: Statement;
  fill: Statement;
}

export function prepareRecount(db: SqliteDatabase): RecountStatements {
  return {
    clear: db.prepare('DELETE FROM counters WHERE account = ?'),
    fill: db.prepare(
      `INSERT INTO counters (account, name, key, n, total)
       SELECT @account, name, key, n, total FROM (${fullCountSql('@account', sqliteScoreUnits)}) WHERE n <> 0`,
    ),
  };
}

/** Sets the account's counters to a full count of its rows, inside the caller's write transaction (a rebuild). */
export function recount(s: RecountStatements, account: string): void {
  s.clear.run(account);
  s.fill.run({ account });
}
