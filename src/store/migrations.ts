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

