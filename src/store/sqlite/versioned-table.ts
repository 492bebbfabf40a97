// One table of versioned rows (campaigns, candidates, credits) of one account: read by keys,
// written back whole, the rows that were absent inserted. SQLite has one writer: the transaction
// holds the lock. The statements are prepared once and bind the account.
import type { Statement } from 'better-sqlite3';
import type { StoredRow } from '../../tables/stored.js';
import type { SqliteDatabase } from './database.js';

const BOOLEAN_COLUMNS = new Set(['is_sourced', 'call_queued', 'sms_sent']);
const toSql = (column: string, value: unknown): unknown =>
  BOOLEAN_COLUMNS.has(column) ? (value === null || value === undefined ? null : value ? 1 : 0) : value;

export interface VersionedTable<T extends object> {
  read: Statement;
  insert: Statement;
  update: Statement;
  /** The column of the rows' key within the account; null for credits, one row per account. */
  key: string | null;
  columns: readonly string[];
  decode: (row: Record<string, unknown>) => T;
  empty: (key: string) => T;
  keyOf: (row: T) => string;
}

/** A table keyed by (account, `key`), or by the account alone when `key` is null. */
export function versionedTable<T extends object>(
  db: SqliteDatabase,
  table: string,
  key: string | null,
  columns: readonly string[],
  rows: Pick<VersionedTable<T>, 'decode' | 'empty' | 'keyOf'>,
): VersionedTable<T> {
  const all = [...columns, 'field_versions'];
  const keys = key === null ? ['account'] : ['account', key];
  const where = keys.map((k) => `${k} = ?`).join(' AND ');
  return {
    // Raw mode (arrays), the columns then field_versions: see lockTable.
    read: db.prepare(`SELECT ${all.join(', ')} FROM ${table} WHERE ${where}`).raw(true),
    insert: db.prepare(`INSERT INTO ${table} (${[...all, ...keys].join(', ')}) VALUES (${[...all, ...keys].map(() => '?').join(', ')})`),
    update: db.prepare(`UPDATE ${table} SET ${all.map((c) => `${c} = ?`).join(', ')} WHERE ${where}`),
    key,
    columns,
    ...rows,
  };
}

/** The key's values as the statements bind them: the account, then the row's key if it has one. */
const keyValues = (table: { key: string | null }, account: string, key: string): string[] =>
  table.key !== null ? [account, key] : [account];

/**
 * The account's stored rows of these keys; a key with no row yet comes as an empty, `absent` row.
 * Read as arrays: better-sqlite3 builds a row object column by column through V8's API, about twice
 * the CPU of an array and the object made here, on a candidate's twenty columns read for most events.
 */
export function lockTable<T extends object>(table: VersionedTable<T>, account: string, keys: readonly string[]): Map<string, StoredRow<T>> {
  const found = new Map<string, StoredRow<T>>();
  const { columns } = table;
  for (const k of keys) {
    const stored = table.read.get(...keyValues(table, account, k)) as unknown[] | undefined;
    if (stored === undefined) {
      found.set(k, { row: table.empty(k), field_versions: '|', absent: true });
      continue;
    }
    const row: Record<string, unknown> = {};
    if (table.key !== null) row[table.key] = k;
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = stored[i];
    found.set(k, { row: table.decode(row), field_versions: stored[columns.length] as string });
  }
  return found;
}

/** Writes the account's rows back whole: inserted if they were absent, updated otherwise. */
export function saveTable<T extends object>(table: VersionedTable<T>, account: string, rows: readonly StoredRow<T>[]): void {
  const { columns, insert, update, keyOf } = table;
  for (const { row, field_versions, absent } of rows) {
    const record = row as Record<string, unknown>;
    (absent ? insert : update).run(
      ...columns.map((c) => toSql(c, record[c] ?? null)),
      field_versions,
      ...keyValues(table, account, keyOf(row)),
    );
  }
}
