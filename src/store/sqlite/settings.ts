// Settings (the generated webhook secret, the reconciliation's progress): read, set once, or replaced inside
// a write transaction. The reads and the replacement are prepared at first use.
import type { Statement } from 'better-sqlite3';
import { prepared, type SqliteConnection } from './connection.js';
import type { SqliteDatabase } from './database.js';

const READ = 'SELECT value, updated_at FROM settings WHERE key = ?';

export interface StoredSetting {
  value: string;
  updated_at: string;
}

export interface SettingStatements {
  once: Statement;
}

export function prepareSettings(db: SqliteDatabase): SettingStatements {
  return {
    once: db.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING'),
  };
}

export function setting(connection: SqliteConnection, key: string): StoredSetting | undefined {
  return prepared(connection, READ).get(key) as StoredSetting | undefined;
}

/** Stores the value unless the key has one; the stored value (ours, or one set first). */
export function settingOnce(
  connection: SqliteConnection,
  s: SettingStatements,
  key: string,
  value: string,
): StoredSetting & { created: boolean } {
  const at = new Date().toISOString();
  const created = s.once.run(key, value, at).changes === 1;
  const stored = prepared(connection, READ).get(key) as StoredSetting;
  return { ...stored, created };
}

/** Sets a setting, inserted or replaced. */
export function putSetting(connection: SqliteConnection, key: string, value: string): void {
  prepared(
    connection,
    'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
  ).run(key, value, new Date().toISOString());
}
