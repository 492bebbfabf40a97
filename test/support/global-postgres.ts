// Vitest global setup: one real PostgreSQL server for the whole run (each test file makes its own
// databases on it). Where no binaries can be found at all, PostgreSQL tests say so and skip; under
// CI=true, the run fails instead.
import type { TestProject } from 'vitest/node';
import { needs } from './needs.js';
import { findBinaries, POSTGRES_INSTALL, startPostgres, type PostgresServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The maintenance URL of the test server, or '' when none could be started. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  let server: PostgresServer | undefined;
  if (!needs('PostgreSQL', (await findBinaries()) !== undefined, { install: POSTGRES_INSTALL, untested: 'every PostgreSQL test' })) {
    project.provide('postgresUrl', '');
  } else {
    server = await startPostgres();
    project.provide('postgresUrl', server.url);
  }
  return async () => {
    await server?.stop();
  };
}
