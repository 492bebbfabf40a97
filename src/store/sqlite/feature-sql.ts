// A feature's own SQL (src/store/feature-sql.ts) on the SQLite connection: reads queue behind the
// write transaction in progress, every change is a write transaction of its own.
import type { EngineSql } from '../engine-sql.js';
import type { ConnectionRecipe, FeatureSql } from '../feature-sql.js';
import { prepared, read, writeTransaction, type SqliteConnection, type Writer } from './connection.js';

export function sqliteFeatureSql(connection: SqliteConnection, writer: Writer | undefined, elsewhere?: ConnectionRecipe): FeatureSql {
  // Inside the transaction: the statements run at once (a queued read would wait for the transaction itself).
  const rows = <T>(sql: string, parameters: readonly unknown[]) => prepared(connection, sql).all(...parameters) as T[];
  const direct: EngineSql = { placeholder: () => '?', rows };
  return {
    pooled: { ...direct, rows: (sql, parameters) => read(connection, () => rows(sql, parameters)) },
    transaction: (work, options) => writeTransaction(connection, writer, () => work(direct), options),
    anotherConnection: () => elsewhere,
  };
}
