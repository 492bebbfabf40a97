// The receivers table on SQLite (migration 008): heartbeats of the receivers that project.
import type { Statement } from 'better-sqlite3';
import type { ReceiverRow } from '../rows.js';
import type { Store } from '../store.js';
import type { SqliteDatabase } from './database.js';

/** Runs a statement between this connection's write transactions, as the store's reads do. */
type Between = <T>(run: () => T) => Promise<T>;

/**
 * The presence operations of the SQLite store. A beat is one autocommit statement, run outside
 * the store's write queue: it never waits behind the intake's writes, and never for another
 * connection's lock (the connection's busy timeout is 0), so that a locked file fails it at once.
 */
export function sqlitePresence(db: SqliteDatabase, between: Between): Pick<Store, 'beat' | 'receivers' | 'forgetReceivers'> {
  // Prepared at first use: a store opened read-only still lists receivers.
  const cache = new Map<string, Statement>();
  const statement = (sql: string): Statement => {
    let prepared = cache.get(sql);
    if (prepared === undefined) cache.set(sql, (prepared = db.prepare(sql)));
    return prepared;
  };
  return {
    beat: (r) =>
      between(() => {
        statement(
          `INSERT INTO receivers (receiver_id, pid, host, started_at, every_ms, seen_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (receiver_id) DO UPDATE SET every_ms = excluded.every_ms, seen_at = excluded.seen_at`,
        ).run(r.receiver_id, r.pid, r.host, r.started_at, r.every_ms, Date.now());
      }),
    receivers: () =>
      between(() => {
        const now = Date.now();
        const rows = statement(
          'SELECT receiver_id, pid, host, started_at, every_ms, seen_at FROM receivers ORDER BY seen_at DESC',
        ).all() as Array<Omit<ReceiverRow, 'age_ms'> & { seen_at: number }>;
        return rows.map(({ seen_at, ...row }) => ({ ...row, age_ms: Math.max(0, now - seen_at) }));
      }),
    forgetReceivers: (ids) =>
      between(() => {
        const forget = statement('DELETE FROM receivers WHERE receiver_id = ?');
        for (const id of ids) forget.run(id);
      }),
  };
}
