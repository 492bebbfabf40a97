// The counters on PostgreSQL (migration 015): read, and counted again from the rows. Each
// server process adds to rows of its own (slot = its pid), so that replicas never wait on one
// another's counter rows; a counter is the sum of its slots (folded by the heartbeat: presence.ts).
import { fullCountSql, inboxCountsOf, inboxCountsSql, type InboxCounts } from '../counters.js';
import { query, type Session } from './session.js';

/** A score in the counters' units, rounded half up: as the triggers compute it. */
const postgresScoreUnits = (score: string): string => `floor(${score} * 1000000000 + 0.5)::bigint`;

/** The account's inbox rows by state (every state present, 0 when none), and its handler failures. */
export async function counts(db: Session, account: string): Promise<InboxCounts> {
  return inboxCountsOf(await query<{ name: string; key: string; n: number }>(db, inboxCountsSql('$1'), [account]));
}

/**
 * Brings the account's counters to a full count of its rows, in the caller's transaction (a
 * rebuild). Not by replacing them: other transactions add to them meanwhile. The count and the
 * counters are read in one statement, so from one snapshot, and the difference is added to slot 0:
 * a transaction that commits later adds its own change on top, as it would have anyway.
 */
export async function recount(tx: Session, account: string): Promise<void> {
  await query(
    tx,
    `WITH counted AS (${fullCountSql('$1', postgresScoreUnits)}),
          kept AS (SELECT name, key, SUM(n) AS n, SUM(total) AS total FROM counters WHERE account = $1 GROUP BY name, key),
          diff AS (
            SELECT COALESCE(c.name, k.name) AS name, COALESCE(c.key, k.key) AS key,
                   COALESCE(c.n, 0) - COALESCE(k.n, 0) AS n, COALESCE(c.total, 0) - COALESCE(k.total, 0) AS total
            FROM counted c FULL JOIN kept k ON c.name = k.name AND c.key = k.key)
     INSERT INTO counters (account, name, key, slot, n, total)
       SELECT $1, name, key, 0, n, total FROM diff WHERE n <> 0 OR total <> 0
     ON CONFLICT (account, name, key, slot) DO UPDATE SET n = counters.n + EXCLUDED.n, total = counters.total + EXCLUDED.total`,
    [account],
  );
}
