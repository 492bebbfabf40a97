// A database as an older release left it: only the first migrations applied, on either engine.
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadMigrations } from '../../src/store/migrations.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrations.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/migrations.js';
import type { EngineUnderTest } from './engines.js';

/** A database as an older release left it: only the first `upTo` migrations applied. */
export async function olderDatabase(engine: EngineUnderTest, upTo: number): Promise<string> {
  const { database } = await engine.fresh();
  if (engine.name === 'postgres') {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      await migratePostgres(
        client as never,
        undefined,
        loadMigrations('postgres').filter((m) => m.version <= upTo),
      );
    } finally {
      await client.end();
    }
  } else {
    const db = new Database(database);
    migrateSqlite(
      db,
      loadMigrations('sqlite').filter((m) => m.version <= upTo),
    );
    db.close();
  }
  return database;
}
