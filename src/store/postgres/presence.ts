// The receivers table on PostgreSQL (migration 007): heartbeats of the receivers that project,
// on every replica. Beats and ages use the server's clock, so hosts whose clocks differ agree.
import type { QueryResultRow } from 'pg';
import type { ReceiverRow } from '../rows.js';
import type { Store } from '../store.js';

/** A statement on the pool, outside any transaction (the store's reads). */
type Run = <R extends QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

/** The presence operations of the PostgreSQL store: one autocommit statement each. */
export function postgresPresence(run: Run): Pick<Store, 'beat' | 'receivers' | 'forgetReceivers'> {
  return {
    async beat(r) {
      await run(
        `INSERT INTO receivers (receiver_id, pid, host, started_at, every_ms, seen_at) VALUES ($1, $2, $3, $4, $5, now())
         ON CONFLICT (receiver_id) DO UPDATE SET every_ms = excluded.every_ms, seen_at = now()`,
        [r.receiver_id, r.pid, r.host, r.started_at, r.every_ms],
      );
      // Housekeeping on the beat's rhythm: the counter rows of server processes gone are folded
      // into one (migration 015), so that a counter stays a few rows however often connections come and go.
      await run('SELECT fold_counters()');
    },
    async receivers() {
      return await run<ReceiverRow & QueryResultRow>(
        `SELECT receiver_id, pid, host, started_at, every_ms,
                GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - seen_at) * 1000)::float8 AS age_ms
         FROM receivers ORDER BY seen_at DESC`,
      );
    },
    async forgetReceivers(ids) {
      if (ids.length === 0) return;
      await run('DELETE FROM receivers WHERE receiver_id = ANY($1::text[])', [[...ids]]);
    },
  };
}
