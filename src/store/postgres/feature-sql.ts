// A feature's own SQL (src/store/feature-sql.ts) on the pool: reads on any client, each change in a
// transaction of its own.
import type { EngineSql } from '../engine-sql.js';
import type { ConnectionRecipe, FeatureSql } from '../feature-sql.js';
import { inTransaction, query, type Engine, type Session } from './session.js';

function sessionSql(session: Session): EngineSql {
  return {
    placeholder: (n) => `$${n}`,
    rows: async <T>(sql: string, parameters: readonly unknown[]) => (await query(session, sql, [...parameters])) as T[],
  };
}

export function postgresFeatureSql(engine: Engine, elsewhere?: ConnectionRecipe): FeatureSql {
  return {
    pooled: sessionSql(engine.pooled),
    transaction: (work, options) => inTransaction(engine, (tx) => work(sessionSql(tx)), options),
    anotherConnection: () => elsewhere,
  };
}
