import type Database from 'better-sqlite3';
import { DatabaseTooNewError, loadMigrations, type Migration } from '../migrations.js';

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
  const applied = new Set(
    db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[],
  );
  const known = migrations.at(-1)?.version ?? 0;
  const newest = Math.max(0, ...applied);
  if (newest > known) throw new DatabaseTooNewError(newest, known);

  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const ran: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    }).immediate();
    ran.push(migration.version);
  }
  return ran;
}
