// `copy` carries every table of the schema (src/transfer/tables.ts): a migration that adds a table
// or a column, on either engine, fails here until the copy's list names it (or says why not), so
// that no future table is quietly left behind on a move to the other engine.
import { describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/store/open.js';
import { COPIED_TABLES, LEFT_OUT, type ColumnKind } from '../../src/transfer/tables.js';
import { ENGINES } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';

/** The types each engine may hold a kind of column in (SQLite's rebuild tables declare none). */
const TYPES: Record<'sqlite' | 'postgres', Record<ColumnKind, string[]>> = {
  sqlite: {
    text: ['TEXT', ''],
    integer: ['INTEGER', ''],
    real: ['REAL', ''],
    bytes: ['BLOB'],
    flag: ['INTEGER', ''],
    instant: ['TEXT', ''],
    'epoch-ms': ['INTEGER'],
  },
  postgres: {
    text: ['text'],
    integer: ['integer', 'bigint'],
    real: ['double precision'],
    bytes: ['bytea'],
    flag: ['boolean'],
    instant: ['timestamp with time zone'],
    'epoch-ms': ['timestamp with time zone'],
  },
};

async function schemaOf(engine: 'sqlite' | 'postgres', database: string): Promise<Map<string, Map<string, string>>> {
  const sql = sqlOn(database);
  const rows =
    engine === 'sqlite'
      ? await sql.query<{ t: string; c: string; type: string }>(
          "SELECT m.name AS t, p.name AS c, p.type AS type FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'",
        )
      : await sql.query<{ t: string; c: string; type: string }>(
          "SELECT table_name AS t, column_name AS c, data_type AS type FROM information_schema.columns WHERE table_schema = 'public'",
        );
  const tables = new Map<string, Map<string, string>>();
  for (const { t, c, type } of rows) tables.set(t, (tables.get(t) ?? new Map<string, string>()).set(c, type));
  return tables;
}

describe.each(ENGINES)('the tables copy carries, on $name', (engine) => {
  it('name every table of the schema, each with all its columns and their types, or say why it is left out', async () => {
    const { database } = await engine.fresh();
    await migrateDatabase(database);
    const schema = await schemaOf(engine.name, database);

    const listed = [...COPIED_TABLES.map((t) => t.name), ...Object.keys(LEFT_OUT)].sort();
    expect([...schema.keys()].sort(), 'a table is in the schema but not in src/transfer/tables.ts (COPIED_TABLES or LEFT_OUT)').toEqual(
      listed,
    );
    for (const table of COPIED_TABLES) {
      const columns = schema.get(table.name)!;
      const expected = [...Object.keys(table.columns), ...(engine.name === 'sqlite' ? (table.sqliteOnly ?? []) : [])].sort();
      expect([...columns.keys()].sort(), `the columns of ${table.name} in src/transfer/tables.ts`).toEqual(expected);
      for (const [column, kind] of Object.entries(table.columns)) {
        expect(TYPES[engine.name][kind], `${table.name}.${column} is ${columns.get(column)} on ${engine.name}, declared ${kind}`).toContain(
          columns.get(column),
        );
      }
    }
  });
});
