import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

/** The SQL files shipped with the package: `migrations/NNN_name.sql`, applied in order. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class DatabaseTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `This database was written by a newer prequal-hooks (schema version ${found}; this one knows up to ${known}). ` +
        'Upgrade prequal-hooks, or point it at another database file.',
    );
    this.name = 'DatabaseTooNewError';
  }
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .map((file) => /^(\d+)_(.+)\.sql$/.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({
      version: Number(match[1]),
      name: match[2]!,
      sql: readFileSync(`${dir}/${match[0]}`, 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Applies every migration the database has not recorded yet, each in its own transaction with
 * its record, so that a crash leaves it either applied and recorded or neither.
 */
export function migrate(db: Database.Database, migrations: Migration[] = loadMigrations()): number[] {
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
