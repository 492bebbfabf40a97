// node-postgres, loaded only when a PostgreSQL URL or pool is given: SQLite users never load it.
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { ConfigurationError } from '../../errors.js';
import { StoreUnavailableError } from '../errors.js';

export type { Pool, PoolClient };

export interface PostgresConnectOptions {
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** The schema holding the tables. Default `public`. */
  schema?: string;
  /** Longest wait for a connection, and longest statement (ms). Default 4000: within the sender's 5 s. */
  timeoutMs?: number;
}

const TIMESTAMPTZ = 1184;
const TIMESTAMP = 1114;
const INT8 = 20;
const NUMERIC = 1700;

// `2026-11-20 10:00:00.123456+00` or `+05:30` → `2026-11-20T10:00:00.123Z`, as SQLite stores it.
function isoMillis(text: string): string {
  const m = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?$/.exec(text);
  if (m === null) return text;
  const [, date, time, fraction = '', oh, om = '00'] = m;
  const ms = fraction.slice(0, 3).padEnd(3, '0');
  return new Date(`${date}T${time}.${ms}${oh}:${om}`).toISOString();
}

/**
 * node-postgres itself: an optional peer dependency, so a SQLite-only install has none and learns
 * here, when it first asks for PostgreSQL, how to get it.
 */
export async function loadPg(): Promise<typeof import('pg').default> {
  try {
    return (await import('pg')).default;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConfigurationError(
      'A PostgreSQL store needs node-postgres, an optional peer dependency of prequal-hooks: `npm install pg` beside prequal-hooks',
      { cause: error },
    );
  }
}

/** Per-query type parsers: rows read the same as SQLite's (ISO text, plain numbers), without touching pg's globals. */
export async function typeParsers(): Promise<QueryConfig['types']> {
  const pg = await loadPg();
  return {
    getTypeParser: ((oid: number, format?: string) => {
      if (oid === TIMESTAMPTZ || oid === TIMESTAMP) return (value: string) => isoMillis(value);
      if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format as 'text') as (value: string) => unknown;
    }) as never,
  };
}

/** A pool for a `postgres://` URL, with our timeouts, UTC and the schema on every connection. */
export async function createPool(url: string, options: PostgresConnectOptions = {}): Promise<Pool> {
  const pg = await loadPg();
  const timeoutMs = options.timeoutMs ?? 4000;
  const settings = [
    // The startup options are split at spaces; a backslash keeps one in a value.
    `-c search_path=${quoteIdentifier(options.schema ?? 'public')
      .replace(/\\/g, '\\\\')
      .replace(/ /g, '\\ ')}`,
    '-c TimeZone=UTC',
    `-c statement_timeout=${timeoutMs}`,
    `-c lock_timeout=${Math.max(500, timeoutMs - 1000)}`,
    `-c idle_in_transaction_session_timeout=${timeoutMs * 4}`,
  ];
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs + 500,
    application_name: 'prequal-hooks',
    options: settings.join(' '),
  });
  // An idle client whose server went away emits here; without a listener it would crash the process.
  pool.on('error', () => undefined);
  return pool;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

// SQLSTATE classes and codes that mean "not now": the caller answers 503 or retries later.
// Classes: 08 connection exception, 53 insufficient resources (disk full, too many connections),
// 57 operator intervention (shutdown, cancelled by a timeout), 58 system error (I/O). Codes:
// serialization failure, deadlock, lock not available, read-only transaction (a standby).
// XX000 (internal error) is not among them: a server bug is not cured by waiting.
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);
const UNAVAILABLE_CODES = new Set(['40001', '40P01', '55P03', '25006']);
const UNAVAILABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

// node-postgres gives its own connection failures no code: these are its messages (pg/lib/client.js,
// pg-pool), matched whole at the start, not by a loose pattern that could match a query's error.
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout expired',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];
const CLOSED_MESSAGES = ['Client has already been connected', 'Cannot use a pool after calling end on the pool'];

function isSqlState(code: string): boolean {
  return /^[0-9A-Z]{5}$/.test(code);
}

/** A PostgreSQL or connection error that a retry may get past, as a StoreUnavailableError. */
export function unavailable(error: unknown): StoreUnavailableError | undefined {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string') {
    const retryable = isSqlState(code)
      ? UNAVAILABLE_CLASSES.has(code.slice(0, 2)) || UNAVAILABLE_CODES.has(code)
      : UNAVAILABLE_ERRNOS.has(code);
    return retryable ? new StoreUnavailableError(code, message, { cause: error }) : undefined;
  }
  if (CONNECTION_MESSAGES.some((m) => message.startsWith(m))) return new StoreUnavailableError('CONNECTION', message, { cause: error });
  if (CLOSED_MESSAGES.some((m) => message.startsWith(m))) return new StoreUnavailableError('CLOSED', message, { cause: error });
  return undefined;
}
