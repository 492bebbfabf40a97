import { setFlagsFromString } from 'node:v8';
import { existsSync } from 'node:fs';
import { checkSchemaVersion, SchemaError } from '../store/migrations.js';
import { displayLocation, isPostgresUrl, openStore } from '../store/open.js';

export { displayLocation };
import { openDatabase, type SqliteDatabase } from '../store/sqlite/database.js';
import { schemaVersion } from '../store/sqlite/migrations.js';
import { createSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { CommandError } from './args.js';

/** Fails with a message that says how to get a database, rather than creating an empty one. */
export function requireDatabaseFile(location: string): void {
  if (!isPostgresUrl(location) && !existsSync(location)) {
    throw new CommandError(
      `no database at ${location}. Point --db (or PREQUAL_HOOKS_DB) at the file that "prequal-hooks serve" or "prequal-hooks replay" writes`,
    );
  }
}

/**
 * Opens an existing database read-only (no migrations, no writes: safe beside a running
 * receiver), and checks that this version can read it.
 */
export async function openForReading(location: string, postgres: { schema?: string } = {}): Promise<Store> {
  requireDatabaseFile(location);
  if (isPostgresUrl(location)) {
    try {
      return await openStore(location, { readonly: true, ...postgres });
    } catch (error) {
      if (error instanceof SchemaError || (error as Error).name === 'DatabaseTooNewError') throw error;
      throw new CommandError(`cannot open ${displayLocation(location)}: ${(error as Error).message}`);
    }
  }
  let db: SqliteDatabase;
  try {
    db = openDatabase(location, { readonly: true });
  } catch (error) {
    throw new CommandError(`cannot open ${location}: ${(error as Error).message}`);
  }
  try {
    checkSchema(db, location);
  } catch (error) {
    db.close();
    throw error;
  }
  return createSqliteStore(db, { location: `sqlite:${location}`, busyTimeoutMs: 2000, ownsConnection: true, readonly: true });
}

function checkSchema(db: SqliteDatabase, path: string): void {
  let found: number | null;
  try {
    found = schemaVersion(db);
  } catch (error) {
    throw new CommandError(`cannot read ${path}: ${(error as Error).message}`);
  }
  checkSchemaVersion(found, 'sqlite', path);
}

/**
 * For the commands that stream a whole file or inbox (replay, rebuild): V8's young generation
 * kept at the size it has when the command starts (4 MB a half, once the modules are loaded)
 * instead of growing to 16. They allocate many short-lived objects and keep few; the larger
 * nursery buys some speed and costs 20 MB of RSS: on the bench's 1,000,000-event replay, peak RSS
 * 115-124 MB against 140-148, for about 0.87x the events/s (noisy: 0.65-1.04 over nine alternated
 * pairs) and 1.1-1.2x the CPU (`npm run bench:replay-memory`).
 * It sets the growth factor, which V8 reads each time it grows the nursery: `--max-semi-space-size`
 * is read once, when the process starts, and set here it changed nothing. A runtime that refuses
 * the flag keeps its default nursery.
 */
export function smallNursery(): void {
  try {
    setFlagsFromString('--semi-space-growth-factor=1');
  } catch {
    // Not V8, or a V8 without the flag: the default nursery.
  }
}
