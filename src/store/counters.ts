// The counters (migrations/<engine>/*_counters.sql): the figures of /metrics, the console's
// overview and `inspect`, kept by triggers in the transaction of every change to the rows they
// count, so that reading them costs the same however large the inbox. Read here for both engines:
// a counter is the sum of its rows (PostgreSQL keeps one row per server process, SQLite one).
import type { InboxState } from './inbox-state.js';

export type InboxCounts = Record<InboxState, number> & { handler_failures: number };

/** A candidate status, as the counters name it: `candidates:<status>`. */
type CandidateStatus = 'pending' | 'completed' | 'voicemail' | 'incomplete';

/** Scores are summed in units of 1e-9 (an exact integer sum, whatever the order of the changes). */
const SCORE_UNITS = 1_000_000_000;

/** The counter of a campaign's candidates: all of them, or those in one status. */
export const candidatesCounter = (status?: CandidateStatus): string => (status === undefined ? 'candidates' : `candidates:${status}`);

/**
 * SQL giving a counter of the campaign a query has at hand (`account` and `key` are SQL
 * expressions: columns of the outer query, or placeholders): its count, 0 when it has no row.
 */
export function counterSql(name: string, account: string, key: string): string {
  return `(SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM counters WHERE account = ${account} AND name = '${name}' AND key = ${key})`;
}

/** SQL giving the mean score of a campaign's completed candidates with a score; null when none. */
export function averageScoreSql(account: string, key: string): string {
  return `(SELECT CAST(SUM(total) AS DOUBLE PRECISION) / CAST(NULLIF(SUM(n), 0) * ${SCORE_UNITS} AS DOUBLE PRECISION)
           FROM counters WHERE account = ${account} AND name = 'scores' AND key = ${key})`;
}

/** The read of an account's inbox counts (one placeholder: the account), and its rows as counts. */
export const inboxCountsSql = (placeholder: string): string =>
  `SELECT name, key, CAST(SUM(n) AS BIGINT) AS n FROM counters WHERE account = ${placeholder} AND name IN ('inbox', 'handler_failures') GROUP BY name, key`;

export function inboxCountsOf(rows: ReadonlyArray<{ name: string; key: string; n: number | bigint }>): InboxCounts {
  const counts: InboxCounts = { pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: 0 };
  for (const { name, key, n } of rows) {
    if (name === 'handler_failures') counts.handler_failures = Number(n);
    else if (key in counts) counts[key as InboxState] = Number(n);
  }
  return counts;
}

/**
 * The account's counters counted from its rows, as (name, key, n, total): what the counters must
 * hold, read by a rebuild and by the tests. `scoreUnits` is the engine's SQL for a score in units
 * (rounded half up, as the triggers round it); `account` the placeholder of the account.
 */
export function fullCountSql(account: string, scoreUnits: (score: string) => string): string {
  return `SELECT 'inbox' AS name, state AS key, COUNT(*) AS n, 0 AS total FROM inbox WHERE account = ${account} GROUP BY state
    UNION ALL SELECT 'handler_failures', '', COUNT(*), 0 FROM handler_failures WHERE account = ${account}
    UNION ALL SELECT 'candidates', campaign_id, COUNT(*), 0 FROM candidates WHERE account = ${account} AND campaign_id IS NOT NULL GROUP BY campaign_id
    UNION ALL SELECT 'candidates:' || status, campaign_id, COUNT(*), 0 FROM candidates
      WHERE account = ${account} AND campaign_id IS NOT NULL AND status IS NOT NULL GROUP BY campaign_id, status
    UNION ALL SELECT 'scores', campaign_id, COUNT(*), SUM(${scoreUnits('interview_score')}) FROM candidates
      WHERE account = ${account} AND campaign_id IS NOT NULL AND status = 'completed' AND interview_score IS NOT NULL GROUP BY campaign_id`;
}
