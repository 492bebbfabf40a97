// Vitest global setup: one PostgreSQL server for the whole run (each test file makes its own
// databases on it). TEST_POSTGRES_URL names a server that is already running (a CI service; its
// user must be allowed to create databases); otherwise one is started from real binaries. Where no
// binaries can be found at all, PostgreSQL tests say so and skip; under CI=true, the run fails
// instead. The integration and end-to-end projects both list this setup: they share one server.
import type { TestProject } from 'vitest/node';
import { needs } from './needs.js';
import { findBinaries, POSTGRES_INSTALL, startPostgres, type PostgresServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The maintenance URL of the test server, or '' when none could be started. */
    postgresUrl: string;
  }
}

interface Shared {
  url: Promise<string>;
  server: PostgresServer | undefined;
  users: number;
}

// Each project loads its global setups on its own: the one server is kept on globalThis.
const KEY = Symbol.for('prequal-hooks.test-postgres');
const registry = globalThis as { [KEY]?: Shared };

async function serverUrl(shared: Shared): Promise<string> {
  const given = process.env.TEST_POSTGRES_URL;
  if (given !== undefined && given !== '') return given;
  if (!needs('PostgreSQL', (await findBinaries()) !== undefined, { install: POSTGRES_INSTALL, untested: 'every PostgreSQL test' }))
    return '';
  shared.server = await startPostgres();
  return shared.server.url;
}

export default async function setup(project: TestProject) {
  let shared = registry[KEY];
  if (shared === undefined) {
    const fresh: Shared = { url: Promise.resolve(''), server: undefined, users: 0 };
    fresh.url = serverUrl(fresh);
    shared = registry[KEY] = fresh;
  }
  shared.users++;
  project.provide('postgresUrl', await shared.url);
  return async () => {
    if (--shared.users > 0) return;
    delete registry[KEY];
    await shared.server?.stop();
  };
}
