// The accounts registry (src/store/accounts-registry.ts) on the pool: reads on any client, each
// change in a transaction of its own.
import { accountsRegistry, type AccountsRegistry, type RegistrySql } from '../accounts-registry.js';
import { inTransaction, query, type Engine, type Session } from './session.js';

function registrySql(session: Session): RegistrySql {
  return {
    placeholder: (n) => `$${n}`,
    rows: async <T>(sql: string, parameters: readonly unknown[]) => (await query(session, sql, [...parameters])) as T[],
    run: async (sql, parameters) => void (await query(session, sql, [...parameters])),
  };
}

export function postgresRegistry(engine: Engine): AccountsRegistry {
  return accountsRegistry({
    pooled: registrySql(engine.pooled),
    transaction: (work) => inTransaction(engine, (tx) => work(registrySql(tx))),
  });
}
