import { checkSchemaVersion, DatabaseTooNewError, loadMigrations, pendingOf, SchemaError, type Migration } from '../migrations.js';
import { quoteIdentifier, type PoolClient } from './connection.js';

// One lock for every process migrating this database: replicas that start together migrate once.
const MIGRATION_LOCK = 'prequal-hooks:migrations';

/**
 * Applies the migrations the database has not recorded, all in one transaction under an advisory
 * lock (PostgreSQL's DDL is transactional): a crash leaves every one applied and recorded, or none.
 * A schema written by a newer version is refused.
 */
export async function migrate(
  client: PoolClient,
  schema?: string,
  migrations: Migration[] = loadMigrations('postgres'),
): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query({ text: 'SELECT pg_advisory_xact_lock(hashtext($1))', values: [`${MIGRATION_LOCK}:${schema ?? 'public'}`] });
    // A schema of our own is created at the first start (the user needs CREATE on the database).
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL
    )`);
    const applied = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version)),
    );
    const known = migrations.at(-1)?.version ?? 0;
    const newest = Math.max(0, ...applied);
    if (newest > known) throw new DatabaseTooNewError(newest, known);
    const ran: number[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query({
        text: 'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())',
        values: [migration.version, migration.name],
      });
      ran.push(migration.version);
    }
    await client.query('COMMIT');
    return ran;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** For read-only openers: the schema must be this version's, since they do not migrate. */
export async function checkSchema(client: PoolClient, where: string): Promise<void> {
  const { rows } = await client.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists");
  let found: number | null = null;
  if (rows[0]?.exists) {
    found = (await client.query<{ found: number | null }>('SELECT MAX(version) AS found FROM schema_migrations')).rows[0]?.found ?? null;
  }
  if (found === null) {
    // The commonest cause: a database made with `serve --schema X`, read without it.
    const { rows: elsewhere } = await client.query<{ schema: string }>(
      "SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'schema_migrations' ORDER BY 1 LIMIT 5",
    );
    if (elsewhere.length > 0) {
      const names = elsewhere.map((r) => r.schema);
      throw new SchemaError(
        `${where} has no prequal-hooks tables in the schema searched, but ${names.length === 1 ? `schema "${names[0]}" has them` : `schemas ${names.map((n) => `"${n}"`).join(', ')} have them`}: ` +
          `give --schema ${names[0]} (or PREQUAL_HOOKS_SCHEMA=${names[0]})`,
      );
    }
  }
  checkSchemaVersion(found, 'postgres', where);
}

/** The migrations this database (in the connection's schema) has not recorded. */
export async function pendingMigrations(client: PoolClient, migrations: Migration[] = loadMigrations('postgres')): Promise<Migration[]> {
  const { rows } = await client.query<{ exists: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS exists");
  const applied = new Set(
    rows[0]?.exists
      ? (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => Number(r.version))
      : [],
  );
  return pendingOf(applied, migrations);
}
