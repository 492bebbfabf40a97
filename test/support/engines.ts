import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openStore, type StoreOptions } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { createDatabase } from './postgres-server.js';
import { tempDir } from './servers.js';

export interface EngineUnderTest {
  name: 'sqlite' | 'postgres';
  /** A new, empty database of this engine: a path or a URL. */
  fresh(): Promise<{ database: string; cleanup: () => void }>;
}

/** The test server's URL ('' when none could be started); only the projects with its global setup have one. */
export function postgresUrl(): string {
  const url = inject('postgresUrl') as string | undefined;
  if (url === undefined) {
    throw new Error('this test uses the PostgreSQL test server, which only the integration and e2e projects start (vitest.config.ts)');
  }
  return url;
}

const sqlite: EngineUnderTest = {
  name: 'sqlite',
  async fresh() {
    const tmp = tempDir();
    return { database: tmp.dbPath, cleanup: tmp.cleanup };
  },
};

const postgres: EngineUnderTest = {
  name: 'postgres',
  async fresh() {
    const database = await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
    return { database, cleanup: () => undefined };
  },
};

/** Both engines, for `describe.each`; PostgreSQL only when the test server runs. */
export const ENGINES: EngineUnderTest[] = postgresUrl() === '' ? [sqlite] : [sqlite, postgres];

/** Opens a store on a fresh database of the engine; `close` closes it and removes the file. */
export async function freshStore(
  engine: EngineUnderTest,
  options: StoreOptions = {},
): Promise<{ store: Store; database: string; close: () => Promise<void> }> {
  const { database, cleanup } = await engine.fresh();
  const store = await openStore(database, options);
  return {
    store,
    database,
    close: async () => {
      await store.close();
      cleanup();
    },
  };
}
