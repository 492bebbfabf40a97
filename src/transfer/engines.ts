// Each engine as `copy` and `dump` see it: a source read in one snapshot, in batches of rows whose
// values are neutral (text, numbers, Buffers, booleans, ISO instants, Unix ms: tables.ts), and a
// target written in one transaction. The only place here that tells the engines apart. Their SQL
// is here rather than behind the store's ports: a copy reads and writes every table whole, below
// every port, and must hold one snapshot (the source) and one transaction (the target) throughout.
import Database from 'better-sqlite3';
import { checkSchemaVersion } from '../store/migrations.js';
import { createPool, quoteIdentifier, typeParsers, type Pool, type PoolClient } from '../store/postgres/connection.js';
import { recount } from '../store/postgres/counters.js';
import { checkSchema } from '../store/postgres/migrations.js';
import { schemaVersion } from '../store/sqlite/migrations.js';
import { openDatabase, type SqliteDatabase } from '../store/sqlite/database.js';
import { MISSED_BEATS } from '../store/presence.js';
import { displayLocation, isPostgresUrl, migrateDatabase } from '../store/open.js';
import type { ColumnKind, CopiedTable } from './tables.js';
import { TransferError } from './errors.js';

type Engine = 'sqlite' | 'postgres';
/** A value as it crosses engines (tables.ts, ColumnKind). */
type Neutral = string | number | boolean | Buffer | null;

/** A database read in one consistent snapshot (SQLite: a read transaction; PostgreSQL: repeatable read). */
export interface Source {
  readonly engine: Engine;
  readonly location: string;
  /** The rows of a read of a few rows (parameters as `$1`… are turned into the engine's own). */
  rows<T extends Record<string, unknown>>(sql: string, parameters?: readonly unknown[]): Promise<T[]>;
  /** The table's columns (`names`, of `table`) a batch at a time, in `order`; a WHERE clause in `$1`… */
  batches(
    query: { table: string; names: readonly string[]; kinds: readonly ColumnKind[]; order: readonly string[]; where?: string },
    parameters: readonly unknown[],
    size: number,
  ): AsyncGenerator<Neutral[][]>;
  close(): Promise<void>;
}

/** A database written in one transaction, committed by `commit`, rolled back by `close` before it. */
export interface Target {
  readonly engine: Engine;
  readonly location: string;
  rows<T extends Record<string, unknown>>(sql: string): Promise<T[]>;
  insert(table: CopiedTable, names: readonly string[], rows: readonly Neutral[][]): Promise<void>;
  /** Replaces the rows the migrations wrote in a table the copy fills (`seeded`). */
  clear(table: string): Promise<void>;
  commit(): Promise<void>;
  close(): Promise<void>;
}

const q = quoteIdentifier;

/** `$1`… as better-sqlite3 takes them: `?`, so each parameter is written once, in order. */
const sqliteParameters = (sql: string) => sql.replace(/\$\d+/g, '?');

/** A receiver counts as writing while its heartbeat is at most MISSED_BEATS of its intervals old (store/presence.ts). */
export async function refuseWhileWritten(database: Pick<Source, 'engine' | 'location' | 'rows'>, role: string): Promise<void> {
  const sql =
    database.engine === 'sqlite'
      ? "SELECT pid, host, every_ms, CAST(strftime('%s', 'now') AS INTEGER) * 1000 - seen_at AS age_ms FROM receivers"
      : 'SELECT pid, host, every_ms, floor(extract(epoch FROM now() - seen_at) * 1000) AS age_ms FROM receivers';
  const rows = await database.rows<{ pid: number; host: string; every_ms: number; age_ms: number }>(sql);
  const running = rows.find((r) => Number(r.age_ms) <= MISSED_BEATS * Number(r.every_ms));
  if (running !== undefined) {
    throw new TransferError(
      `a receiver is running on the ${role} ${database.location} (pid ${running.pid} on host ${running.host}, heartbeat ${Math.max(0, Math.round(Number(running.age_ms) / 1000))} s ago): ` +
        'stop it (and every replica) first, so that nothing is written during the copy',
    );
  }
}

function fromSqlite(kind: ColumnKind, value: unknown): Neutral {
  if (value === null || value === undefined) return null;
  if (kind === 'flag') return value !== 0;
  if (kind === 'bytes') return Buffer.isBuffer(value) ? value : Buffer.from(value as string, 'utf8');
  return value as Neutral;
}

function toSqlite(value: Neutral): Neutral {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

class SqliteSource implements Source {
  readonly engine = 'sqlite' as const;
  constructor(
    private readonly db: SqliteDatabase,
    readonly location: string,
  ) {
    // One read transaction for the whole copy: every table as of the same commit.
    db.exec('BEGIN');
    db.prepare('SELECT 1 FROM schema_migrations LIMIT 1').get();
  }
  rows<T>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> {
    return Promise.resolve(this.db.prepare(sqliteParameters(sql)).all(...parameters) as T[]);
  }
  async *batches(query: Parameters<Source['batches']>[0], parameters: readonly unknown[], size: number): AsyncGenerator<Neutral[][]> {
    const { table, names, kinds, order, where } = query;
    const statement = this.db
      .prepare(
        `SELECT ${names.map(q).join(', ')} FROM ${q(table)}${where === undefined ? '' : ` WHERE ${sqliteParameters(where)}`} ORDER BY ${order.map(q).join(', ')}`,
      )
      .raw(true);
    let batch: Neutral[][] = [];
    for (const row of statement.iterate(...parameters) as Iterable<unknown[]>) {
      batch.push(row.map((value, i) => fromSqlite(kinds[i]!, value)));
      if (batch.length >= size || weight(batch) >= BATCH_BYTES) {
        yield batch;
        batch = [];
        // better-sqlite3 reads synchronously: between batches, the output and signals get their turn.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (batch.length > 0) yield batch;
  }
  close(): Promise<void> {
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.db.close();
    return Promise.resolve();
  }
}

/** A batch is also cut at this many bytes of bodies, so that large bodies keep memory flat. */
const BATCH_BYTES = 8 * 1024 * 1024;
function weight(batch: readonly Neutral[][]): number {
  let bytes = 0;
  for (const row of batch) for (const value of row) if (Buffer.isBuffer(value)) bytes += value.length;
  return bytes;
}

/** How PostgreSQL gives a column's value in the neutral form (epoch-ms: its timestamptz as Unix ms). */
function pgSelect(name: string, kind: ColumnKind): string {
  return kind === 'epoch-ms' ? `floor(extract(epoch FROM ${q(name)}) * 1000)::bigint AS ${q(name)}` : q(name);
}

/** The array type a column is sent in, and how the array's element becomes the column's value. */
const PG_ARRAYS: Readonly<Record<ColumnKind, { type: string; value: (element: string) => string }>> = {
  text: { type: 'text[]', value: (e) => e },
  integer: { type: 'bigint[]', value: (e) => e },
  real: { type: 'float8[]', value: (e) => e },
  bytes: { type: 'bytea[]', value: (e) => e },
  flag: { type: 'boolean[]', value: (e) => e },
  instant: { type: 'timestamptz[]', value: (e) => e },
  'epoch-ms': { type: 'bigint[]', value: (e) => `'epoch'::timestamptz + ${e} * interval '1 millisecond'` },
};

class PostgresSource implements Source {
  readonly engine = 'postgres' as const;
  private cursors = 0;
  constructor(
    private readonly pool: Pool,
    private readonly client: PoolClient,
    private readonly types: Awaited<ReturnType<typeof typeParsers>>,
    readonly location: string,
  ) {}
  async rows<T extends Record<string, unknown>>(sql: string, parameters: readonly unknown[] = []): Promise<T[]> {
    return (await this.client.query<T>({ text: sql, values: [...parameters], types: this.types })).rows;
  }
  async *batches(query: Parameters<Source['batches']>[0], parameters: readonly unknown[], size: number): AsyncGenerator<Neutral[][]> {
    const { table, names, kinds, order, where } = query;
    const cursor = `transfer_${++this.cursors}`;
    await this.client.query({
      text: `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${names.map((n, i) => pgSelect(n, kinds[i]!)).join(', ')} FROM ${q(table)}${where === undefined ? '' : ` WHERE ${where}`} ORDER BY ${order.map(q).join(', ')}`,
      values: [...parameters],
    });
    try {
      for (;;) {
        const { rows } = await this.client.query<Neutral[]>({ text: `FETCH ${size} FROM ${cursor}`, rowMode: 'array', types: this.types });
        if (rows.length > 0) yield rows;
        if (rows.length < size) break;
      }
    } finally {
      await this.client.query(`CLOSE ${cursor}`);
    }
  }
  async close(): Promise<void> {
    await this.client.query('COMMIT').catch(() => undefined);
    this.client.release();
    await this.pool.end();
  }
}

/** No statement deadline: a copy or a dump reads whole tables. */
const LONG = { poolSize: 1, timeoutMs: 24 * 3_600_000 };

/** Opens a database to read, as it is (never migrated), in one snapshot; its schema must be this version's. */
export async function openSource(location: string, options: { schema?: string } = {}): Promise<Source> {
  if (isPostgresUrl(location)) {
    const pool = await createPool(location, { ...LONG, ...options });
    try {
      const client = await pool.connect();
      try {
        await checkSchema(client, displayLocation(location));
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        return new PostgresSource(pool, client, await typeParsers(), displayLocation(location));
      } catch (error) {
        client.release();
        throw error;
      }
    } catch (error) {
      await pool.end();
      throw wrapped(error, `cannot read ${displayLocation(location)}`);
    }
  }
  let db: SqliteDatabase;
  try {
    db = new Database(location, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new TransferError(`cannot open ${location}: ${(error as Error).message}`);
  }
  try {
    db.pragma('busy_timeout = 10000');
    checkSchemaVersion(schemaVersion(db), 'sqlite', location);
    return new SqliteSource(db, location);
  } catch (error) {
    db.close();
    throw error;
  }
}

class SqliteTarget implements Target {
  readonly engine = 'sqlite' as const;
  private readonly statements = new Map<string, Database.Statement>();
  constructor(
    private readonly db: SqliteDatabase,
    readonly location: string,
  ) {
    db.exec('BEGIN IMMEDIATE');
  }
  rows<T>(sql: string): Promise<T[]> {
    return Promise.resolve(this.db.prepare(sql).all() as T[]);
  }
  insert(table: CopiedTable, names: readonly string[], rows: readonly Neutral[][]): Promise<void> {
    const key = `${table.name}:${names.join(',')}`;
    let statement = this.statements.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(`INSERT INTO ${q(table.name)} (${names.map(q).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`);
      this.statements.set(key, statement);
    }
    for (const row of rows) statement.run(...row.map(toSqlite));
    return Promise.resolve();
  }
  clear(table: string): Promise<void> {
    this.db.prepare(`DELETE FROM ${q(table)}`).run();
    return Promise.resolve();
  }
  commit(): Promise<void> {
    this.db.exec('COMMIT');
    return Promise.resolve();
  }
  close(): Promise<void> {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.db.close();
    return Promise.resolve();
  }
}

class PostgresTarget implements Target {
  readonly engine = 'postgres' as const;
  constructor(
    private readonly pool: Pool,
    private readonly client: PoolClient,
    private readonly types: Awaited<ReturnType<typeof typeParsers>>,
    readonly location: string,
  ) {}
  async rows<T extends Record<string, unknown>>(sql: string): Promise<T[]> {
    return (await this.client.query<T>({ text: sql, types: this.types })).rows;
  }
  async insert(table: CopiedTable, names: readonly string[], rows: readonly Neutral[][]): Promise<void> {
    const kinds = names.map((n) => table.columns[n]!);
    const arrays = names.map((_, i) => rows.map((row) => row[i] ?? null));
    const columns = names.map((_, i) => `c${i}`);
    const text =
      `INSERT INTO ${q(table.name)} (${names.map(q).join(', ')}) ` +
      `SELECT ${kinds.map((k, i) => PG_ARRAYS[k].value(`u.${columns[i]}`)).join(', ')} ` +
      `FROM unnest(${kinds.map((k, i) => `$${i + 1}::${PG_ARRAYS[k].type}`).join(', ')}) AS u(${columns.join(', ')})`;
    await this.client.query(text, arrays);
  }
  async clear(table: string): Promise<void> {
    await this.client.query(`DELETE FROM ${q(table)}`);
  }
  /** Sequences and identities go on after the highest id copied (or start at 1 on an empty table). */
  async commit(): Promise<void> {
    await this.client.query('COMMIT');
  }
  async close(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => undefined);
    this.client.release();
    await this.pool.end();
  }
  /**
   * The counting triggers (migration 015) add to one counter row per row written: a copy of a
   * million rows in one transaction updated the same counter row a million times, each update
   * slower than the last (0.7k events/s at 100k). They are off while the rows go in, and the
   * counters counted once at the end, as a rebuild counts them. Only the tables' owner may turn
   * them off: for another user they stay on (slower, the same counts).
   */
  async countersOff(): Promise<void> {
    await this.client.query('SAVEPOINT counting');
    try {
      for (const table of COUNTED) await this.client.query(`ALTER TABLE ${q(table)} DISABLE TRIGGER USER`);
      this.countedAtEnd = true;
    } catch {
      await this.client.query('ROLLBACK TO SAVEPOINT counting');
    }
  }
  private countedAtEnd = false;
  async countersOn(): Promise<void> {
    if (!this.countedAtEnd) return;
    for (const table of COUNTED) await this.client.query(`ALTER TABLE ${q(table)} ENABLE TRIGGER USER`);
    const accounts = await this.client.query<{ account: string }>(
      'SELECT account FROM inbox UNION SELECT account FROM candidates UNION SELECT account FROM handler_failures',
    );
    for (const { account } of accounts.rows) await recount({ client: this.client, types: this.types }, account);
  }
  async advanceSequence(table: string, column: string): Promise<void> {
    await this.client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${q(column)}) FROM ${q(table)}), 0) + 1, false)`,
      [q(table), column],
    );
  }
}

/**
 * Opens the database to write to (created and migrated as `migrate` does), in one transaction that
 * holds every copied table locked against writers until it commits.
 */
export async function openTarget(location: string, tables: readonly CopiedTable[], options: { schema?: string } = {}): Promise<Target> {
  await migrateDatabase(location, options);
  if (isPostgresUrl(location)) {
    const pool = await createPool(location, { ...LONG, ...options });
    try {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query("SET LOCAL lock_timeout = '10s'");
        await client.query(`LOCK TABLE ${tables.map((t) => q(t.name)).join(', ')} IN EXCLUSIVE MODE`);
        return new PostgresTarget(pool, client, await typeParsers(), displayLocation(location));
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        throw error;
      }
    } catch (error) {
      await pool.end();
      throw wrapped(error, `cannot write to ${displayLocation(location)}`);
    }
  }
  const db = openDatabase(location, { busyTimeoutMs: 10_000 });
  try {
    return new SqliteTarget(db, location);
  } catch (error) {
    db.close();
    throw wrapped(error, `cannot write to ${location}`);
  }
}

/** The tables whose rows the counting triggers count (migrations/postgres/015_counters.sql). */
const COUNTED = ['inbox', 'handler_failures', 'candidates'];

/** Before the rows go in: PostgreSQL's counting triggers off, where the user may (counted at the end instead). */
export async function beforeRows(target: Target): Promise<void> {
  if (target instanceof PostgresTarget) await target.countersOff();
}

/** After the rows are in: what each engine needs for new rows to follow them (PostgreSQL's counters and sequences). */
export async function afterRows(target: Target, tables: readonly CopiedTable[]): Promise<void> {
  if (!(target instanceof PostgresTarget)) return; // SQLite counted each row, and numbers a rowid after the highest one
  await target.countersOn();
  for (const table of tables) if (table.sequence !== undefined) await target.advanceSequence(table.name, table.sequence);
}

/** The columns the source holds and the target takes: the engine-only ones left for the target to make. */
export function copiedColumns(table: CopiedTable): string[] {
  return Object.keys(table.columns);
}

function wrapped(error: unknown, what: string): Error {
  if (error instanceof Error && ['SchemaError', 'DatabaseTooNewError', 'TransferError', 'ConfigurationError'].includes(error.name))
    return error;
  return new TransferError(`${what}: ${(error as Error).message}`, { cause: error });
}
