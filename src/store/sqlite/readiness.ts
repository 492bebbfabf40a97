// Readiness and the way out: whether a write can be taken now, making every commit durable, and
// closing once the writes queued have run.
import type { Statement } from 'better-sqlite3';
import type { ReadinessProbe } from '../rows.js';
import { guard, runWrite, serialised, unavailable, writeTransaction, type SqliteConnection, type Writer } from './connection.js';
import type { SqliteDatabase } from './database.js';

export interface ReadinessStatements {
  probe: Statement;
}

export function prepareReadiness(db: SqliteDatabase): ReadinessStatements {
  return {
    probe: db.prepare(
      `INSERT INTO settings (key, value, updated_at) VALUES ('readiness_probe', 'ok', ?) ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`,
    ),
  };
}

/** Whether a write can be taken now, without waiting on another connection's lock. */
export async function probe(
  connection: SqliteConnection,
  writer: Writer | undefined,
  s: ReadinessStatements | undefined,
): Promise<ReadinessProbe> {
  if (connection.closed) return { ok: false, reason: 'closed' };
  if (writer === undefined || s === undefined) return { ok: false, reason: 'read-only' };
  try {
    // A real write, committed: a lock alone, or a write rolled back before it reaches the
    // disk, does not tell a full disk or a read-only file. It does not wait for another
    // connection's lock: a probe must answer at once.
    await serialised(connection, () =>
      runWrite(
        connection,
        writer,
        () => {
          s.probe.run(new Date().toISOString());
          return Promise.resolve();
        },
        {},
        0,
      ),
    );
    return { ok: true };
  } catch (error) {
    const failure = unavailable(error);
    return { ok: false, reason: failure ? `${failure.code}: ${failure.message}` : (error as Error).message };
  }
}

/** Makes every write committed so far durable, those committed with `durable: false` included. */
export function flush(connection: SqliteConnection, writer: Writer | undefined): Promise<void> {
  // In WAL mode SQLite syncs the WAL before a checkpoint, whatever the synchronous level.
  return writeTransaction(connection, writer, () => Promise.resolve()).then(() =>
    guard(() => void connection.db.pragma('wal_checkpoint(PASSIVE)')),
  );
}

/** Closes once the writes queued have run; the connection too if the store opened it. */
export async function close(connection: SqliteConnection, ownsConnection: boolean): Promise<void> {
  if (connection.closed) return;
  await connection.queue;
  connection.closed = true;
  if (ownsConnection) connection.db.close();
}
