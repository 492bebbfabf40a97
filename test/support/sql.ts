// A test's own SQL on the database a store uses, beside the store (which runs no caller SQL):
// reads to check what was stored, and writes by hand (damage, rows of other versions).
import Database from 'better-sqlite3';
import type { Pool } from 'pg';
import { isPostgresUrl } from '../../src/store/open.js';
import { quoteIdentifier, typeParsers } from '../../src/store/postgres/connection.js';

/** A SQLite path, a PostgreSQL URL, or the SQLite connection a store was opened on (`:memory:`). */
export type TestDatabase = string | Database.Database;

export interface TestSql {
  /** `?` placeholders on both engines; rows as the store reads them (ISO text, plain numbers); a statement without rows is run. */
  query<T = Record<string, unknown>>(sql: string, parameters?: readonly unknown[]): Promise<T[]>;
}

// A statement that returns rows runs on the connection given, else on a writer (opened only then).
function onConnection(db: Database.Database, sql: string, parameters: readonly unknown[], writer?: () => Database.Database) {
  const statement = db.prepare(sql);
  if (statement.reader) return statement.all(...parameters);
  if (writer === undefined) statement.run(...parameters);
  else {
    const write = writer();
    try {
      write.prepare(sql).run(...parameters);
    } finally {
      write.close();
    }
  }
  return [];
}

// A SQLite file: a read-only connection for each read, a writable one only for a write.
function sqliteFile(path: string, sql: string, parameters: readonly unknown[]): unknown[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return onConnection(db, sql, parameters, () => {
      // Checked as the store's own writes are.
      const writer = new Database(path, { fileMustExist: true, timeout: 5000 });
      writer.pragma('foreign_keys = ON');
      return writer;
    });
  } finally {
    db.close();
  }
}

// One small pool per database and schema, for the life of the test file; idle, it lets the process exit.
const pools = new Map<string, Promise<{ pool: Pool; types: Awaited<ReturnType<typeof typeParsers>> }>>();

function postgres(url: string, schema: string) {
  const key = `${schema} ${url}`;
  let entry = pools.get(key);
  if (entry === undefined) {
    entry = (async () => {
      const { default: pg } = await import('pg');
      const search = quoteIdentifier(schema).replace(/\\/g, '\\\\').replace(/ /g, '\\ ');
      const pool = new pg.Pool({
        connectionString: url,
        max: 2,
        idleTimeoutMillis: 1000,
        allowExitOnIdle: true,
        options: `-c search_path=${search} -c TimeZone=UTC`,
      });
      pool.on('error', () => undefined);
      return { pool, types: await typeParsers() };
    })();
    pools.set(key, entry);
  }
  return entry;
}

// The test writes `?`; PostgreSQL numbers its placeholders.
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** SQL on the database the store of `database` uses (PostgreSQL: in `schema`, default public). */
export function sqlOn(database: TestDatabase, options: { schema?: string } = {}): TestSql {
  return {
    async query<T>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> {
      if (typeof database !== 'string') return onConnection(database, sql, parameters) as T[];
      if (!isPostgresUrl(database)) return sqliteFile(database, sql, parameters) as T[];
      const { pool, types } = await postgres(database, options.schema ?? 'public');
      return (await pool.query({ text: numbered(sql), values: [...parameters], types })).rows as T[];
    },
  };
}
