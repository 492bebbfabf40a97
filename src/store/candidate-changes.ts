// A candidate's changes, found by its id (an erasure redacts them, an export reads them), written
// once for both engines. The index that finds them (`changes_of_candidate`) is keyed by the account,
// then the block of 1,024 numbers a change falls in (`seq >> 10`), then the id, so that a
// projection's batch writes into the last block's few leaves rather than a random leaf a change
// (SQLite's migration 025). A lookup probes each block the account still holds, from its oldest
// change to its newest: a thousand probes for a million changes.
import type { EngineSql } from './engine-sql.js';

/** A `WITH` clause naming `blocks`, and the condition on `changes` it serves. */
export interface CandidateChangesSql {
  with: string;
  where: string;
  /** The values of the placeholders of `with` then `where`, in order. */
  parameters: unknown[];
}

/**
 * The SQL that finds the account's changes of one candidate, its placeholders numbered from `from`.
 * A query that orders them orders by `+seq`: ordered by `seq`, SQLite reads the account's whole
 * feed in order instead of probing the blocks.
 */
export function candidateChangesSql(sql: EngineSql, account: string, candidateId: string, from = 1): CandidateChangesSql {
  const p = (n: number) => sql.placeholder(from + n);
  return {
    with: `WITH RECURSIVE blocks(b) AS (
       SELECT MIN(seq) >> 10 FROM changes WHERE account = ${p(0)}
       UNION ALL SELECT b + 1 FROM blocks WHERE b < (SELECT MAX(seq) >> 10 FROM changes WHERE account = ${p(1)}))`,
    where: `account = ${p(2)} AND entity = 'candidate' AND (seq >> 10) IN (SELECT b FROM blocks) AND id = ${p(3)}`,
    parameters: [account, account, account, candidateId],
  };
}
