// The seam of a feature that keeps its own tables and SQL beside its logic, above the store
// (src/destinations/sql.ts): each engine runs that SQL, in its own placeholders, on its own
// connections and transactions. Only such a module takes it; everything else takes the ports it
// makes, never this runner.
import type { EngineSql } from './engine-sql.js';

/** A feature's statements on an engine: each a read of its rows (writes use RETURNING when they count). */
export interface FeatureSql {
  /** Outside a transaction: on SQLite queued behind the write transaction in progress; on PostgreSQL on any pooled client. */
  readonly pooled: EngineSql;
  /** One write transaction; `durable: false`: its commit need not reach the disk before it returns (WriteOptions). */
  transaction<T>(work: (sql: EngineSql) => Promise<T>, options?: { durable?: boolean }): Promise<T>;
  /**
   * How another thread of this process opens the same database on a connection of its own
   * (`openStore(database, { ...options, readonly: true })`), so that a feature's reads leave the
   * intake's event loop; undefined when none can (in memory, without WAL, a pool the caller gave).
   */
  anotherConnection(): ConnectionRecipe | undefined;
}

/** What opens a database again elsewhere: its `database` option (a file, or a URL with its password: never logged) and its options. */
export interface ConnectionRecipe {
  database: string;
  options: { busyTimeoutMs?: number; schema?: string };
}
