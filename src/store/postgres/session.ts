// What every operation family of the PostgreSQL engine runs on. An operation of one statement
// takes a `Session` (the pool, or the client of a transaction it is part of); an operation that
// needs a transaction of its own takes the `Engine` and opens one with `inTransaction`.
import type { QueryConfig, QueryResultRow } from 'pg';
import { StoreUnavailableError } from '../errors.js';
import type { WriteOptions } from '../write-ports.js';
import { unavailable, type Pool, type PoolClient } from './connection.js';

export type TypeParsers = QueryConfig['types'];

/** Where SQL runs: a checked-out client or the pool, and the parsers its rows are read with. */
export interface Session {
  readonly client: { query: PoolClient['query'] };
  readonly types: TypeParsers;
}

/** One store's hold on the database, shared by its operations. */
export interface Engine {
  readonly pool: Pool;
  readonly types: TypeParsers;
  /** The pool as a session: reads and single-statement writes, each on whichever client is free. */
  readonly pooled: Session;
  /** Clients given an 'error' listener already (the pool hands the same ones out again). */
  readonly guarded: WeakSet<PoolClient>;
  /** Set once by close: no transaction starts after it, no listener reconnects. */
  closed: boolean;
}

export function createEngine(pool: Pool, types: TypeParsers): Engine {
  return { pool, types, pooled: { client: pool, types }, guarded: new WeakSet(), closed: false };
}

/** Runs one statement; its rows read as SQLite's do, and a fault of the server as a StoreUnavailableError. */
export function query<R extends QueryResultRow>(session: Session, text: string, values: unknown[] = []): Promise<R[]> {
  const config: QueryConfig = { text, values, types: session.types };
  return (session.client.query(config) as Promise<{ rows: R[] }>).then(
    (result) => result.rows,
    (error: unknown) => {
      throw unavailable(error) ?? error;
    },
  );
}

/** A client of the pool for this store's own use; the caller releases it. */
export async function checkOut(engine: Engine): Promise<PoolClient> {
  try {
    const client = await engine.pool.connect();
    // A checked-out client whose server goes away emits 'error'; with no listener that would crash
    // the process. The failure reaches us anyway through the query in flight.
    if (!engine.guarded.has(client)) {
      engine.guarded.add(client);
      client.on('error', () => undefined);
    }
    return client;
  } catch (error) {
    throw unavailable(error) ?? error;
  }
}

/** One transaction on one connection: committed when `work` resolves, rolled back when it throws. */
export async function inTransaction<T>(engine: Engine, work: (tx: Session) => Promise<T>, options: WriteOptions = {}): Promise<T> {
  if (engine.closed) throw new StoreUnavailableError('CLOSED', 'the store is closed');
  const client = await checkOut(engine);
  const tx: Session = { client, types: engine.types };
  let broken = false;
  try {
    // A projection batch lost to a server crash is only pending again: its commit need not wait for
    // the disk. Sent with BEGIN, in one round trip (a query without parameters may hold two statements).
    await query(tx, options.durable === false ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN');
    const result = await work(tx);
    await query(tx, 'COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw unavailable(error) ?? error;
  } finally {
    client.release(broken ? true : undefined);
  }
}
