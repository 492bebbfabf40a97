// A bench's SQLite files: removed after a round, and its inbox counted from outside.
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';

/** The database, its WAL and shared memory, its accounts key and its server's log. */
export function removeDatabase(db: string): void {
  for (const suffix of ['', '-wal', '-shm', '.accounts-key', '.log']) rmSync(`${db}${suffix}`, { force: true });
}

/** Inbox rows by state or by account (read after the server has stopped, or beside it, read-only). */
export function inboxCounts(db: string, by: 'state' | 'account'): Record<string, number> {
  const check = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const rows = check.prepare(`SELECT ${by} AS k, COUNT(*) AS n FROM inbox GROUP BY ${by}`).all() as { k: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.k, r.n]));
  } finally {
    check.close();
  }
}
