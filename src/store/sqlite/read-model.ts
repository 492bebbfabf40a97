// The read model on SQLite: the shared SQL (../read-model-sql.ts) in SQLite's dialect, each read
// run after the write in progress, on the one connection.
import type { ReadModel } from '../ports/read-model.js';
import { createReadModel, type ReadDialect } from '../read-model-sql.js';
import { prepared, read, type SqliteConnection } from './connection.js';

/** A member of `data` in an accepted body, as text; null for other rows or a body that is not JSON. */
const dataField = (field: 'campaign_id' | 'candidate_id') =>
  `CASE WHEN verdict = 'accepted' AND json_valid(CAST(raw AS TEXT)) THEN CAST(json_extract(CAST(raw AS TEXT), '$.data.${field}') AS TEXT) END`;

export const SQLITE_DIALECT: ReadDialect = {
  placeholder: () => '?',
  campaignOf: dataField('campaign_id'),
  candidateOf: dataField('candidate_id'),
  // received_at is stored as ISO text: its first 16 characters are the minute.
  minuteOf: 'substr(received_at, 1, 16)',
  // For MIN(received_at) SQLite prefers the index by account and time, and walks every row of the
  // account when none is pending (0.5 s at 500,000 rows, at each /metrics scrape); the index of
  // pending rows reads only the backlog.
  pendingInbox: 'inbox INDEXED BY inbox_pending',
};

/** The read model of one account. */
export function sqliteReadModel(connection: SqliteConnection, account: string): ReadModel {
  return createReadModel(
    SQLITE_DIALECT,
    <R>({ text, values }: { text: string; values: unknown[] }) => read(connection, () => prepared(connection, text).all(...values) as R[]),
    account,
  );
}
