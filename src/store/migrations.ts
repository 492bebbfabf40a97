import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The SQL files shipped with the package: `migrations/<engine>/NNN_name.sql`, applied in order. */
const MIGRATIONS_ROOT = fileURLToPath(new URL('../../migrations/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The database was written by a newer prequal-hooks (a later schema version): upgrade, or use another database. */
export class DatabaseTooNewError extends Error {
  constructor(found: number, known: number) {
    super(
      `This database was written by a newer prequal-hooks (schema version ${found}; this one knows up to ${known}). ` +
        'Upgrade prequal-hooks, or point it at another database.',
    );
    this.name = 'DatabaseTooNewError';
  }
}

export function loadMigrations(engine: 'sqlite' | 'postgres', dir: string = `${MIGRATIONS_ROOT}${engine}`): Migration[] {
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

/** A database that a read-only command cannot read as it is: not ours, or not migrated yet. */
export class SchemaError extends Error {
  /** Always `SchemaError`, to tell it apart from other errors. */
  override name = 'SchemaError';
}

/** What a read-only opener says of the schema version it found (`null`: no schema_migrations table). */
export function checkSchemaVersion(found: number | null, engine: 'sqlite' | 'postgres', where: string): void {
  if (found === null) throw new SchemaError(`${where} is not a prequal-hooks database (it has no schema_migrations table)`);
  const known = loadMigrations(engine).at(-1)?.version ?? 0;
  if (found > known) throw new DatabaseTooNewError(found, known);
  if (found < known) {
    // A read-only connection cannot migrate; any writing command does it.
    throw new SchemaError(
      `${where} was written by an older prequal-hooks (schema version ${found} of ${known}). ` +
        'Run "prequal-hooks migrate --db …" on it (after a backup), or start "prequal-hooks serve" on it once, to upgrade it',
    );
  }
}

/** A database that needs migrations, opened by a process told not to apply them (`serve --no-migrate`). */
export class MigrationsPendingError extends SchemaError {
  /** Always `MigrationsPendingError`, to tell it apart from other errors. */
  override name = 'MigrationsPendingError';
  constructor(
    where: string,
    readonly pending: readonly Migration[],
  ) {
    super(
      `${where} needs ${pending.length === 1 ? 'migration' : 'migrations'} ${pending.map((m) => `${m.version} (${m.name})`).join(', ')} and was opened with --no-migrate: ` +
        'take a backup, then run "prequal-hooks migrate --db …" (or start without --no-migrate)',
    );
  }
}

/** The migrations not recorded among `applied`, in order; a database newer than this version is refused. */
export function pendingOf(applied: ReadonlySet<number>, migrations: readonly Migration[]): Migration[] {
  const known = migrations.at(-1)?.version ?? 0;
  const newest = Math.max(0, ...applied);
  if (newest > known) throw new DatabaseTooNewError(newest, known);
  return migrations.filter((m) => !applied.has(m.version));
}
