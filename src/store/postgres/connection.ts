// node-postgres, loaded only when a PostgreSQL URL or pool is given: SQLite users never load it.
import type { Pool, PoolClient, QueryConfig } from 'pg';
import { StoreUnavailableError } from '../store.js';

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

/** Per-query type parsers: rows read the same as SQLite's (ISO text, plain numbers), without touching pg's globals. */
export async function typeParsers(): Promise<QueryConfig['types']> {
  const { default: pg } = await import('pg');
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
  const { default: pg } = await import('pg');
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
const UNAVAILABLE_STATES = /^(08|53|57|58|40001|40P01|55P03|25006|XX000)/;
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

/** A PostgreSQL or connection error that a retry may get past, as a StoreUnavailableError. */
export function unavailable(error: unknown): StoreUnavailableError | undefined {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && (UNAVAILABLE_STATES.test(code) || UNAVAILABLE_ERRNOS.has(code))) {
    return new StoreUnavailableError(code, message, { cause: error });
  }
  if (/timeout|terminated|Connection|connect/i.test(message) && typeof code !== 'string') {
    return new StoreUnavailableError('CONNECTION', message, { cause: error });
  }
  if (/Client has already been connected|Cannot use a pool after calling end/i.test(message)) {
    return new StoreUnavailableError('CLOSED', message, { cause: error });
  }
  return undefined;
}
