import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from './migrations.js';

export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  /** How long a write waits for another connection's lock before giving up (ms). Default 2000. */
  busyTimeoutMs?: number;
  /** Open read-only: no migrations, no writes (the CLI's inspect). */
  readonly?: boolean;
}

/**
 * Opens (and creates) the SQLite file, sets it up for durability and applies the migrations.
 * WAL with `synchronous = FULL`: a committed transaction survives a crash or power loss,
 * which is what a 2xx promises.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): SqliteDatabase {
  if (path !== ':memory:' && !options.readonly) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  try {
    return configureDatabase(db, options);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The settings and migrations of `openDatabase`, for a database the caller opened. */
export function configureDatabase(db: SqliteDatabase, options: OpenDatabaseOptions = {}): SqliteDatabase {
  // Below the sender's 5 s budget, so that a locked database still gets a 503 in time.
  db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 2000)}`);
  if (options.readonly) return db;
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}
