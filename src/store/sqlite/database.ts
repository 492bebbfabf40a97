import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { MigrationsPendingError } from '../migrations.js';
import { migrate, pendingMigrations } from './migrations.js';
import { compactBodies } from './compact-bodies.js';

/** An open better-sqlite3 database. */
export type SqliteDatabase = Database.Database;

export interface OpenDatabaseOptions {
  /** How long a write waits for another connection's lock before giving up (ms). Default 2000. */
  busyTimeoutMs?: number;
  /** Open read-only: no migrations, no writes (the CLI's inspect). */
  readonly?: boolean;
  /** false: refuse (MigrationsPendingError) a database that needs migrations instead of applying them. Default true. */
  migrate?: boolean;
  /** Told once when an existing database file can be read by other users. */
  warn?: (message: string) => void;
}

/** A database that cannot be created where it was asked: a clear message, never a stack or a hang. */
class DatabasePathError extends Error {
  /** Always `DatabasePathError`, to tell it apart from other errors. */
  override name = 'DatabasePathError';
}

/**
 * Creates the missing folders of `path` owner-only (0700), one level at a time: Node's recursive
 * mkdir loops forever on some paths (under /proc), and says little when a parent is a file.
 */
function createFolders(folder: string): void {
  const missing: string[] = [];
  let at = resolve(folder);
  while (!existsSync(at)) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  if (existsSync(at) && !statSync(at).isDirectory())
    throw new DatabasePathError(`cannot create the database in ${folder}: ${at} is not a folder`);
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      throw new DatabasePathError(
        `cannot create the folder ${dir} for the database: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
  }
}

/** Creates an empty SQLite file owner-only (0600), and its missing folders owner-only (0700). */
export function createDatabaseFile(path: string): void {
  createFolders(dirname(path));
  try {
    closeSync(openSync(path, 'a', 0o600));
  } catch (error) {
    throw new DatabasePathError(`cannot create the database ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/**
 * Opens (and creates) the SQLite file, sets it up for durability and applies the migrations.
 * WAL with `synchronous = FULL`: a committed transaction survives a crash or power loss,
 * which is what a 2xx promises.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions = {}): SqliteDatabase {
  if (path !== ':memory:' && !options.readonly) {
    // The file holds the webhook secret and candidates' personal data: created owner-only (its
    // -wal and -shm files take the same permissions from SQLite).
    if (existsSync(path)) {
      const mode = statSync(path).mode;
      if ((mode & 0o077) !== 0) {
        options.warn?.(
          `${path} can be read by other users (mode ${(mode & 0o777).toString(8)}); it holds the webhook secret and candidates' personal data: chmod 600 ${path}`,
        );
      }
    } else {
      createDatabaseFile(path);
    }
  }
  const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  try {
    return configureDatabase(db, options);
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * How every connection that writes is set: WAL with `synchronous = FULL` (a commit survives a
 * crash or power loss), foreign keys, and deleted content overwritten rather than left in free
 * space (an erased candidate's bytes must not outlive the erasure: docs/projection.md section 8).
 */
export function writerSettings(db: SqliteDatabase): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('secure_delete = ON');
}

/** The settings and migrations of `openDatabase`, for a database the caller opened. */
export function configureDatabase(db: SqliteDatabase, options: OpenDatabaseOptions = {}): SqliteDatabase {
  // Below the sender's 5 s budget, so that a locked database still gets a 503 in time.
  db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 2000)}`);
  if (options.readonly) return db;
  writerSettings(db);
  if (options.migrate === false) {
    const pending = pendingMigrations(db);
    if (pending.length > 0) throw new MigrationsPendingError(db.name, pending);
  } else {
    migrate(db);
    // Rows stored before bodies were compressed, rewritten (none once done: resumes if cut short).
    compactBodies(db);
  }
  return db;
}
