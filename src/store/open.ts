// Which engine serves a `database` option. The only place that tells the engines apart.
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import Database from 'better-sqlite3';
import { loadMigrations } from './migrations.js';
import { configureDatabase, createDatabaseFile, openDatabase, writerSettings, type SqliteDatabase } from './sqlite/database.js';
import { migrate as migrateSqlite, pendingMigrations as pendingSqlite } from './sqlite/migrations.js';
import { compactBodies } from './sqlite/compact-bodies.js';
import { createSqliteStore } from './sqlite/store.js';
import type { StoreHandle } from './handle.js';
import type { Store } from './store.js';
import { withDeadline } from '../deadline.js';

/** A `pg.Pool` (node-postgres), described by what we use of it, so that SQLite users need no pg types. */
export interface PostgresPool {
  /** Takes a connection from the pool. */
  connect(): Promise<unknown>;
  /** Runs a statement on any connection. */
  query(...args: never[]): Promise<unknown>;
  /** Closes the pool. */
  end(): Promise<void>;
  /** Listens for a pool error (a connection lost while idle). */
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Where the state lives: a SQLite file path (created with its folder), `:memory:`, an open
 * better-sqlite3 database, a `postgres://` / `postgresql://` URL, an existing `pg.Pool`, or a store
 * `openStore` opened.
 */
export type DatabaseOption = string | SqliteDatabase | PostgresPool | StoreHandle;

/** An already opened store (the CLI opens one to read its settings before the receiver starts). */
export function isStore(value: unknown): value is Store {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Store).write === 'function' &&
    typeof (value as Store).location === 'string'
  );
}

/** How `openStore` opens and migrates an engine. */
export interface StoreOptions {
  /** SQLite: how long a write waits for another connection's lock before a 503 (ms). Default 2000. */
  busyTimeoutMs?: number;
  /** PostgreSQL: connections in the pool made from a URL. Default 10. */
  poolSize?: number;
  /** PostgreSQL: schema of the tables, for a URL (a given pool uses its own search_path). Default `public`. */
  schema?: string;
  /** PostgreSQL: longest wait for a connection or a statement (ms). Default 4000, within the sender's 5 s. */
  timeoutMs?: number;
  /** Read only: SQLite opens the file read-only; neither engine migrates (the schema must be current). */
  readonly?: boolean;
  /** false: refuse a database that needs migrations (MigrationsPendingError) instead of applying them. Default true. */
  migrate?: boolean;
  /** Where the engine logs its warnings and errors (a lost connection, a slow disk). Default: not logged. */
  logger?: Pick<Logger, 'warn' | 'error'>;
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}

/**
 * A database location as logs and people see it: a PostgreSQL URL without its password, whether
 * in the user info (`user:pass@`) or the query (`?password=`, `sslpassword=`, as libpq takes them).
 */
export function displayLocation(location: string): string {
  if (!isPostgresUrl(location)) return location;
  try {
    const url = new URL(location);
    if (url.password !== '') url.password = '***';
    for (const name of [...url.searchParams.keys()]) if (/password/i.test(name)) url.searchParams.set(name, '***');
    return url.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

function isPool(value: unknown): value is PostgresPool {
  return (
    !isStore(value) &&
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PostgresPool).connect === 'function' &&
    typeof (value as { prepare?: unknown }).prepare !== 'function'
  );
}

function isPostgres(database: DatabaseOption): boolean {
  return typeof database === 'string' ? isPostgresUrl(database) : isPool(database);
}

/**
 * Opens the store now when its engine can (an opened store, or SQLite, whose migrations are
 * synchronous, so that a bad path or a newer schema throws at once); undefined when it opens
 * asynchronously (`openStore`).
 */
export function openAtOnce(database: DatabaseOption, options: StoreOptions = {}): Store | undefined {
  if (isStore(database)) return database;
  return isPostgres(database) ? undefined : openSqliteStore(database as string | SqliteDatabase, options);
}

function openSqliteStore(database: string | SqliteDatabase, options: StoreOptions = {}): Store {
  const busyTimeoutMs = options.busyTimeoutMs ?? 2000;
  const owns = typeof database === 'string';
  const warn = options.logger && ((message: string) => options.logger!.warn(message));
  const db =
    typeof database === 'string'
      ? openDatabase(database, {
          busyTimeoutMs,
          readonly: options.readonly ?? false,
          ...(options.migrate === false && { migrate: false }),
          ...(warn && { warn }),
        })
      : configureDatabase(database, { busyTimeoutMs, ...(options.migrate === false && { migrate: false }) });
  return createSqliteStore(db, {
    location: `sqlite:${typeof database === 'string' ? database : db.name}`,
    busyTimeoutMs,
    ownsConnection: owns,
    readonly: options.readonly ?? false,
  });
}

/** Opens the engine the option names, migrated and ready. */
export async function openStore(database: DatabaseOption, options: StoreOptions = {}): Promise<Store> {
  if (isStore(database)) return database;
  if (!isPostgres(database)) return openSqliteStore(database as string | SqliteDatabase, options);
  const { createPool } = await import('./postgres/connection.js');
  const { createPostgresStore } = await import('./postgres/store.js');
  if (typeof database === 'string') {
    const pool = await createPool(database, options);
    try {
      return await createPostgresStore(pool, {
        location: displayLocation(database),
        url: database,
        ownsPool: true,
        readonly: options.readonly ?? false,
        ...(options.migrate === false && { migrate: false }),
        ...(options.schema !== undefined && { schema: options.schema }),
        ...(options.logger && { logger: options.logger }),
      });
    } catch (error) {
      // Never wait long on the way out: a client still checked out would hold end() forever.
      await withDeadline(
        pool.end().catch(() => undefined),
        2000,
        { unref: true },
      );
      throw error;
    }
  }
  return await createPostgresStore(database as never, {
    location: 'postgres (given pool)',
    ownsPool: false,
    readonly: options.readonly ?? false,
    ...(options.migrate === false && { migrate: false }),
    ...(options.logger && { logger: options.logger }),
  });
}

/** What `migrateDatabase` found and did. */
export interface MigrationReport {
  location: string;
  engine: 'sqlite' | 'postgres';
  /** The schema version before (0: none recorded). */
  from: number;
  /** The newest version this release knows. */
  known: number;
  pending: Array<{ version: number; name: string }>;
  /** What was applied now (empty on a dry run). */
  applied: number[];
}

/**
 * Lists the migrations a database needs and, unless `dryRun`, applies them as a start would
 * (SQLite: each in its transaction; PostgreSQL: all in one, under the advisory lock that makes
 * replicas migrate once), with no statement deadline: a migration may rewrite large tables. A
 * SQLite file that does not exist is created as a start creates it, but not by a dry run.
 */
export async function migrateDatabase(location: string, options: { schema?: string; dryRun?: boolean } = {}): Promise<MigrationReport> {
  if (isPostgresUrl(location)) {
    const { createPool } = await import('./postgres/connection.js');
    const { migrate, pendingMigrations } = await import('./postgres/migrations.js');
    const pool = await createPool(location, {
      poolSize: 1,
      timeoutMs: 3_600_000,
      ...(options.schema !== undefined && { schema: options.schema }),
    });
    try {
      const client = await pool.connect();
      try {
        const migrations = loadMigrations('postgres');
        const pending = await pendingMigrations(client, migrations);
        const applied = options.dryRun || pending.length === 0 ? [] : await migrate(client, options.schema, migrations);
        if (!options.dryRun) await (await import('./postgres/compact-bodies.js')).compactBodies(client);
        return report(displayLocation(location), 'postgres', migrations, pending, applied);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  }
  // A new file is created as serve creates it; a dry run creates nothing, and lists every
  // migration from an empty database in memory.
  const exists = existsSync(location);
  if (!exists && !options.dryRun) createDatabaseFile(location);
  const db = exists || !options.dryRun ? new Database(location, { fileMustExist: true }) : new Database(':memory:');
  try {
    db.pragma('busy_timeout = 10000');
    const migrations = loadMigrations('sqlite');
    const pending = pendingSqlite(db, migrations);
    if (!options.dryRun && pending.length > 0) writerSettings(db);
    const applied = options.dryRun || pending.length === 0 ? [] : migrateSqlite(db, migrations);
    if (!options.dryRun) {
      // Rows stored before bodies were compressed, rewritten as a start would, old bodies overwritten.
      db.pragma('secure_delete = ON');
      compactBodies(db);
    }
    return report(location, 'sqlite', migrations, pending, applied);
  } finally {
    db.close();
  }
}

function report(
  location: string,
  engine: 'sqlite' | 'postgres',
  migrations: ReadonlyArray<{ version: number }>,
  pending: ReadonlyArray<{ version: number; name: string }>,
  applied: number[],
): MigrationReport {
  const known = migrations.at(-1)?.version ?? 0;
  const from = Math.max(0, ...migrations.filter((m) => !pending.some((p) => p.version === m.version)).map((m) => m.version));
  return { location, engine, from, known, pending: pending.map(({ version, name }) => ({ version, name })), applied };
}
