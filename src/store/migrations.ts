import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The SQL files shipped with the package: `migrations/<engine>/NNN_name.sql`, applied in order. */
export const MIGRATIONS_ROOT = fileURLToPath(new URL('../../migrations/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

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
        'Start "prequal-hooks serve" on it once to upgrade it',
    );
  }
}
