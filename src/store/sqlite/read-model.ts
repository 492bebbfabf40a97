// The read model on SQLite: the shared SQL (../read-model-sql.ts) in SQLite's dialect, each read
// run after the write in progress, on the one connection.
import type { ReadModel } from '../ports/read-model.js';
import { createReadModel, type ReadDialect } from '../read-model-sql.js';
import { prepared, read, type SqliteConnection } from './connection.js';
import { instantMs } from '../instants.js';
import { KEY_BLOCKS_SQL } from '../handler-keys.js';

/**
 * `data.campaign_id` of an accepted body, as text: the column intake fills, or, for a row stored
 * before it that the upgrade has not rewritten yet (codec NULL: the body as received), read from
 * the body; null for other rows or a body that is not JSON.
 */
const CAMPAIGN_OF = `CASE WHEN codec IS NOT NULL THEN campaign_id
  WHEN verdict = 'accepted' AND json_valid(CAST(raw AS TEXT)) THEN CAST(json_extract(CAST(raw AS TEXT), '$.data.campaign_id') AS TEXT) END`;

export const SQLITE_READ_DIALECT: ReadDialect = {
  placeholder: () => '?',
  campaignOf: CAMPAIGN_OF,
  // received_at is stored as Unix ms (../instants.ts); a value kept as text gives its first 16 characters.
  minuteOf: `CASE WHEN typeof(received_at) = 'integer' THEN strftime('%Y-%m-%dT%H:%M', received_at / 1000, 'unixepoch')
    ELSE substr(received_at, 1, 16) END`,
  instant: instantMs,
  keyBlocks: KEY_BLOCKS_SQL,
  // Unary plus: the same value, but no longer a term an index can be chosen by.
  unindexed: (column) => `+${column}`,
};

/** The read model of one account. */
export function sqliteReadModel(connection: SqliteConnection, account: string): ReadModel {
  return createReadModel(
    SQLITE_READ_DIALECT,
    <R>({ text, values }: { text: string; values: unknown[] }) => read(connection, () => prepared(connection, text).all(...values) as R[]),
    account,
  );
}
