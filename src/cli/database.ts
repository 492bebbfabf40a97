import { existsSync } from 'node:fs';
import { openDatabase, type SqliteDatabase } from '../store/sqlite/database.js';
import { DatabaseTooNewError, loadMigrations } from '../store/migrations.js';
import { CommandError } from './args.js';

/** Fails with a message that says how to get a database, rather than creating an empty one. */
export function requireDatabaseFile(path: string): void {
  if (!existsSync(path)) {
    throw new CommandError(
      `no database at ${path}. Point --db (or PREQUAL_HOOKS_DB) at the file that "prequal-hooks serve" or "prequal-hooks replay" writes`,
    );
  }
}

/**
 * Opens an existing database read-only (no migrations, no writes: safe beside a running
 * receiver), and checks that this version can read it.
 */
export function openForReading(path: string): SqliteDatabase {
  requireDatabaseFile(path);
  let db: SqliteDatabase;
  try {
    db = openDatabase(path, { readonly: true });
  } catch (error) {
    throw new CommandError(`cannot open ${path}: ${(error as Error).message}`);
  }
  try {
    checkSchema(db, path);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

function checkSchema(db: SqliteDatabase, path: string): void {
  let found: number | null;
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    found = table === undefined ? null : (db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null);
  } catch (error) {
    throw new CommandError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (found === null) throw new CommandError(`${path} is not a prequal-hooks database (it has no schema_migrations table)`);
  const known = loadMigrations('sqlite').at(-1)?.version ?? 0;
  if (found > known) throw new DatabaseTooNewError(found, known);
  if (found < known) {
    // A read-only connection cannot migrate; any writing command does it.
    throw new CommandError(
      `${path} was written by an older prequal-hooks (schema version ${found} of ${known}). ` +
        'Start "prequal-hooks serve" on it once to upgrade it',
    );
  }
}
