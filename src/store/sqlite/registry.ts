// The accounts registry (src/store/accounts-registry.ts) on the SQLite connection: its reads queue
// behind the write transaction in progress, its changes are write transactions of their own.
import { accountsRegistry, type AccountsRegistry, type RegistrySql } from '../accounts-registry.js';
import { prepared, read, writeTransaction, type SqliteConnection, type Writer } from './connection.js';

export function sqliteRegistry(connection: SqliteConnection, writer: Writer | undefined): AccountsRegistry {
  // Inside the transaction: the statements run at once (a queued read would wait for the transaction itself).
  const rows = <T>(sql: string, parameters: readonly unknown[]) => prepared(connection, sql).all(...parameters) as T[];
  const direct: RegistrySql = {
    placeholder: () => '?',
    rows,
    run: (sql, parameters) => void prepared(connection, sql).run(...parameters),
  };
  return accountsRegistry({
    pooled: { ...direct, rows: (sql, parameters) => read(connection, () => rows(sql, parameters)) },
    transaction: (work) => writeTransaction(connection, writer, () => work(direct)),
  });
}
