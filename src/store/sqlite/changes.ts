// The changes of the projected rows (docs/projection.md section 10) on SQLite: numbered in the
// write transaction that makes them (one writer at a time, so numbers follow commits), read a
// page at a time by cursor, redacted by an erasure, dropped by retention a prefix at a time.
import type { StoredChangePage } from '../rows.js';
import { CANDIDATE_CAMPAIGN_INDEX, storedChangeRow, type ChangeRecord, type StoredChange } from '../../tables/changes.js';
import { prepared, type SqliteConnection } from './connection.js';
import { sqliteSql } from './reads.js';
import { pruneChanges as pruneChangesOf } from '../prune-changes.js';
import { changeSizesSql, pageEnd } from '../change-page-end.js';
import { candidateChangesSql } from '../candidate-changes.js';
import { copyForRebuild, finishRebuildChanges, markRebuilding, type EngineWrites } from '../rebuild-changes.js';

/** Numbers the changes after the account's last and inserts them; nothing when there are none. */
export function recordChanges(connection: SqliteConnection, account: string, changes: readonly ChangeRecord[], at: string): void {
  if (changes.length === 0) return;
  connection.changed.add(account);
  const { last_seq: last } = prepared(
    connection,
    `INSERT INTO change_heads (account, last_seq) VALUES (?, ?)
     ON CONFLICT (account) DO UPDATE SET last_seq = last_seq + excluded.last_seq RETURNING last_seq`,
  ).get(account, changes.length) as { last_seq: number };
  const first = last - changes.length + 1;
  for (let from = 0; from < changes.length; from += CHANGES_A_STATEMENT) {
    const chunk = changes.slice(from, from + CHANGES_A_STATEMENT);
    const values: unknown[] = [];
    chunk.forEach((change, i) => {
      const row = change.row === null ? null : storedChangeRow(change.entity, change.row);
      values.push(account, first + from + i, change.entity, change.id, change.op, row, at, JSON.stringify(change.events));
    });
    prepared(connection, insertChangesSql(chunk.length)).run(...values);
  }
}

/** Changes a statement inserts at most: one statement for a projection's batch (or a few), not one a change. */
const CHANGES_A_STATEMENT = 32;

function insertChangesSql(count: number): string {
  const row = '(?, ?, ?, ?, ?, ?, ?, ?)';
  return `INSERT INTO changes (account, seq, entity, id, op, row, at, events) VALUES ${Array(count).fill(row).join(', ')}`;
}

/**
 * An erasure's part (docs/projection.md section 8): each earlier change of these candidates keeps
 * only its keys, and one `erase` change each is recorded.
 */
export function eraseChanges(
  connection: SqliteConnection,
  account: string,
  candidateIds: readonly string[],
  at: string,
  events: (candidateId: string) => readonly string[] = () => [],
): void {
  for (const id of candidateIds) {
    const candidate = candidateChangesSql(sqliteSql(connection), account, id);
    prepared(
      connection,
      `${candidate.with} UPDATE changes SET row = json_object('candidate_id', id, 'campaign_id',
         json_extract(row, CASE WHEN substr(row, 1, 1) = '[' THEN '$[${CANDIDATE_CAMPAIGN_INDEX}]' ELSE '$.campaign_id' END))
       WHERE ${candidate.where} AND row IS NOT NULL`,
    ).run(...candidate.parameters);
  }
  recordChanges(
    connection,
    account,
    candidateIds.map((id) => ({ entity: 'candidate', id, op: 'erase', row: null, events: events(id) })),
    at,
  );
}

/** Up to `limit` of the account's changes after `after` (and about `maxBytes`), in order, and where its feed stands. */
export function changesAfter(
  connection: SqliteConnection,
  account: string,
  after: number,
  limit: number,
  maxBytes?: number,
): StoredChangePage {
  const through =
    maxBytes === undefined
      ? Number.MAX_SAFE_INTEGER
      : pageEnd(
          prepared(connection, changeSizesSql(sqliteSql(connection))).all(account, after, limit) as Array<{ seq: number; bytes: number }>,
          maxBytes,
        );
  const changes =
    through === undefined
      ? []
      : (prepared(
          connection,
          'SELECT seq, entity, id, op, row, at, events FROM changes WHERE account = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?',
        ).all(account, after, through, limit) as StoredChange[]);
  const head = prepared(connection, 'SELECT last_seq, dropped_through FROM change_heads WHERE account = ?').get(account) as
    { last_seq: number; dropped_through: number } | undefined;
  const oldest = prepared(connection, 'SELECT seq FROM changes WHERE account = ? ORDER BY seq LIMIT 1').get(account) as
    { seq: number } | undefined;
  return { changes, last: head?.last_seq ?? 0, droppedThrough: head?.dropped_through ?? 0, oldest: oldest?.seq ?? null };
}

/** Retention's part (src/store/prune-changes.ts): up to `limit` changes recorded before `before` dropped; how many. */
export function pruneChanges(connection: SqliteConnection, before: string, limit: number): Promise<number> {
  return pruneChangesOf(sqliteWrites(connection), before, limit);
}

/** The connection as the SQL written once for both engines takes it (inside a write transaction: statements run at once). */
function sqliteWrites(connection: SqliteConnection): EngineWrites {
  return { ...sqliteSql(connection), run: (sql, parameters) => void prepared(connection, sql).run(...parameters) };
}

/** A rebuild's start (src/store/rebuild-changes.ts) around `empty`, which empties the projected rows; returns what `empty` did. */
export async function startRebuild<T>(connection: SqliteConnection, account: string, empty: () => T): Promise<T> {
  const sql = sqliteWrites(connection);
  const from = await copyForRebuild(sql, account);
  const result = empty();
  await markRebuilding(sql, account, from);
  return result;
}

/** A rebuild's end: the changes its new state makes, recorded; how many. */
export function finishRebuild(connection: SqliteConnection, account: string): Promise<number> {
  return finishRebuildChanges(sqliteWrites(connection), account, (records) =>
    recordChanges(connection, account, records, new Date().toISOString()),
  );
}
