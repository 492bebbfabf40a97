// The read model on PostgreSQL: the shared SQL (../read-model-sql.ts) in PostgreSQL's dialect, on
// the pool.
import type { QueryResultRow } from 'pg';
import type { ReadModel } from '../ports/read-model.js';
import { createReadModel, type ReadDialect } from '../read-model-sql.js';
import { query, type Session } from './session.js';

/**
 * `data.campaign_id` of an accepted body, as text (null for other rows): the column intake fills,
 * or, for a row stored before it that the upgrade has not rewritten yet (codec NULL: the body as
 * received), read from the body. PostgreSQL cannot hold a NUL in text, and its JSON parser runs out
 * of stack on deep nesting (valid JSON the intake accepts): either would fail the whole listing, so
 * such a body (a NUL escape, or 1,000 brackets and more) gives null, not filterable, instead.
 */
const campaignOf = `CASE WHEN codec IS NOT NULL THEN campaign_id WHEN verdict = 'accepted' AND strpos(convert_from(raw, 'UTF8'), '\\u0000') = 0
     AND length(convert_from(raw, 'UTF8')) - length(translate(convert_from(raw, 'UTF8'), '[{', '')) < 1000
   THEN (convert_from(raw, 'UTF8')::json -> 'data' ->> 'campaign_id') END`;

export const POSTGRES_READ_DIALECT: ReadDialect = {
  placeholder: (n) => `$${n}`,
  campaignOf,
  minuteOf: `to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI')`,
  unindexed: (column) => column,
  instant: (iso) => iso,
};

/** The read model of one account. */
export function postgresReadModel(db: Session, account: string): ReadModel {
  return createReadModel(
    POSTGRES_READ_DIALECT,
    async <R>({ text, values }: { text: string; values: unknown[] }) => (await query<QueryResultRow>(db, text, values)) as R[],
    account,
  );
}
