// The destinations (src/store/destinations.ts) on the pool: reads on any client, each change in a
// transaction of its own.
import type { EngineSql } from '../engine-sql.js';
import { destinationsPort, type DestinationsPort } from '../destinations.js';
import { inTransaction, query, type Engine, type Session } from './session.js';

function destinationsSql(session: Session): EngineSql {
  return {
    placeholder: (n) => `$${n}`,
    rows: async <T>(sql: string, parameters: readonly unknown[]) => (await query(session, sql, [...parameters])) as T[],
  };
}

export function postgresDestinations(engine: Engine): DestinationsPort {
  return destinationsPort({
    pooled: destinationsSql(engine.pooled),
    transaction: (work, options) => inTransaction(engine, (tx) => work(destinationsSql(tx)), options),
  });
}
