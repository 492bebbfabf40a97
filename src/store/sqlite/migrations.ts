import type Database from 'better-sqlite3';
import { DatabaseTooNewError, loadMigrations, pendingOf, type Migration } from '../migrations.js';

// A migration that rebuilds a table others reference says so on its first line: foreign keys
// are off for it (a pragma SQLite ignores inside a transaction, so it is set around it), and
// checked before it commits.
const FOREIGN_KEYS_OFF = /^-- prequal-hooks: foreign_keys off\s*$/m;

/**
 * Applies every migration the database has not recorded yet, each in its own transaction with
 * its record, so that a crash leaves it either applied and recorded or neither.
 */
export function migrate(db: Database.Database, migrations: Migration[] = loadMigrations('sqlite')): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
  const known = migrations.at(-1)?.version ?? 0;
  const newest = Math.max(0, ...applied);
  if (newest > known) throw new DatabaseTooNewError(newest, known);

  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const ran: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    const keysOff = FOREIGN_KEYS_OFF.test(migration.sql) && db.pragma('foreign_keys', { simple: true }) === 1;
    if (keysOff) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        db.exec(migration.sql);
        if (keysOff && (db.pragma('foreign_key_check') as unknown[]).length > 0)
          throw new Error(`migration ${migration.version} (${migration.name}) broke a foreign key`);
        record.run(migration.version, migration.name, new Date().toISOString());
      }).immediate();
    } finally {
      if (keysOff) db.pragma('foreign_keys = ON');
    }
    ran.push(migration.version);
  }
  return ran;
}

/** Whether the database has a schema_migrations table (a prequal-hooks database, of any version). */
function recordsMigrations(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
}

/** The migrations this database has not recorded (all of them for a database that has none). */
export function pendingMigrations(db: Database.Database, migrations: Migration[] = loadMigrations('sqlite')): Migration[] {
  const applied = new Set(recordsMigrations(db) ? (db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]) : []);
  return pendingOf(applied, migrations);
}

/** The newest migration the database records, for read-only openers (`checkSchemaVersion`); null: no schema_migrations table. */
export function schemaVersion(db: Database.Database): number | null {
  return recordsMigrations(db) ? (db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) : null;
}
