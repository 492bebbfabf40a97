// One table of versioned rows (campaigns, candidates, credits): read by keys, written back whole,
// the rows that were absent inserted. SQLite has one writer: the transaction holds the lock.
import type { Statement } from 'better-sqlite3';
import type { StoredRow } from '../store.js';
import type { SqliteDatabase } from './database.js';

const BOOLEAN_COLUMNS = new Set(['is_sourced', 'call_queued', 'sms_sent']);
const toSql = (column: string, value: unknown): unknown =>
  BOOLEAN_COLUMNS.has(column) ? (value === null || value === undefined ? null : value ? 1 : 0) : value;

export interface VersionedTable<T extends object> {
  read: Statement;
  insert: Statement;
  update: Statement;
  columns: readonly string[];
  decode: (row: Record<string, unknown>) => T;
  empty: (key: string) => T;
  keyOf: (row: T) => string | number;
}

export function versionedTable<T extends object>(
  db: SqliteDatabase,
  table: string,
  key: string,
  columns: readonly string[],
  rows: Pick<VersionedTable<T>, 'decode' | 'empty' | 'keyOf'>,
): VersionedTable<T> {
  const all = [...columns, 'field_versions'];
  return {
    read: db.prepare(`SELECT ${key}, ${columns.join(', ')}, field_versions FROM ${table} WHERE ${key} = ?`),
    insert: db.prepare(`INSERT INTO ${table} (${[...all, key].join(', ')}) VALUES (${[...all, key].map(() => '?').join(', ')})`),
    update: db.prepare(`UPDATE ${table} SET ${all.map((c) => `${c} = ?`).join(', ')} WHERE ${key} = ?`),
    columns,
    ...rows,
  };
}

/** The stored rows of these keys; a key with no row yet comes as an empty, `absent` row. */
export function lockTable<T extends object>(table: VersionedTable<T>, keys: readonly (string | number)[]): Map<string, StoredRow<T>> {
  const found = new Map<string, StoredRow<T>>();
  for (const k of keys) {
    const stored = table.read.get(k) as (Record<string, unknown> & { field_versions: string }) | undefined;
    if (stored === undefined) {
      found.set(String(k), { row: table.empty(String(k)), field_versions: '|', absent: true });
      continue;
    }
    const { field_versions, ...row } = stored;
    found.set(String(k), { row: table.decode(row), field_versions });
  }
  return found;
}

/** Writes rows back whole: inserted if they were absent, updated otherwise. */
export function saveTable<T extends object>(table: VersionedTable<T>, rows: readonly StoredRow<T>[]): void {
  const { columns, insert, update, keyOf } = table;
  for (const { row, field_versions, absent } of rows) {
    const record = row as Record<string, unknown>;
    (absent ? insert : update).run(...columns.map((c) => toSql(c, record[c] ?? null)), field_versions, keyOf(row));
  }
}
