// The counters (SQLite migration 016, PostgreSQL 015) on a database written by release 0.3.0: the
// migration fills them from a full count of the rows already stored, the triggers keep them as
// the rows left pending are projected, and `rebuild` counts them again from the rows (here after
// they were damaged by hand). Both engines, from the release fixtures of test/fixtures/databases.
import { copyFileSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { rebuild } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { projectPending } from '../support/project.js';
import { tempDir } from '../support/servers.js';
import { sqlOn, type TestSql } from '../support/sql.js';

const RELEASE_DB = new URL('../fixtures/databases/0.3.0.db', import.meta.url);
const RELEASE_DUMP = new URL('../fixtures/databases/0.3.0.postgres.sql', import.meta.url);

/** What counts() and the campaigns' figures must say: counted from the rows. */
async function fullCount(sql: TestSql) {
  const inbox = { pending: 0, projected: 0, unknown: 0, dead: 0 };
  for (const { state, n } of await sql.query<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM inbox GROUP BY state'))
    inbox[state as keyof typeof inbox] = Number(n);
  const [failures] = await sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM handler_failures');
  const candidates = await sql.query<{ campaign_id: string; status: string | null; interview_score: number | null }>(
    'SELECT campaign_id, status, interview_score FROM candidates',
  );
  const campaigns = await sql.query<{ campaign_id: string }>('SELECT campaign_id FROM campaigns ORDER BY campaign_id');
  return {
    counts: { ...inbox, handler_failures: Number(failures!.n) },
    campaigns: campaigns.map(({ campaign_id }) => {
      const own = candidates.filter((c) => c.campaign_id === campaign_id);
      const scores = own.filter((c) => c.status === 'completed' && c.interview_score !== null).map((c) => c.interview_score!);
      return {
        campaign_id,
        total_candidates: own.length,
        interviews_completed: own.filter((c) => c.status === 'completed').length,
        average_score: scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length,
      };
    }),
  };
}

async function counted(store: Store) {
  const campaigns = (await store.readModel.campaigns({ limit: 10_000 }))
    .map(({ campaign_id, total_candidates, interviews_completed, average_score }) => ({
      campaign_id,
      total_candidates,
      interviews_completed,
      average_score,
    }))
    .sort((a, b) => (a.campaign_id < b.campaign_id ? -1 : 1));
  return { counts: await store.counts(), campaigns };
}

/** Opens the release's database (migrating it) and checks the counters through its life. */
async function checkUpgrade(database: string): Promise<void> {
  const sql = sqlOn(database);
  expect(await sql.query("SELECT 1 FROM schema_migrations WHERE name = 'counters'")).toEqual([]);
  const store = await openStore(database);
  try {
    const expected = await fullCount(sql);
    expect(expected.counts.pending).toBeGreaterThan(0);
    expect(expected.counts.dead).toBe(1);
    expect(await counted(store)).toEqual(expected);

    await projectPending(store);
    const projected = await fullCount(sql);
    expect(projected.counts.pending).toBe(0);
    expect(await counted(store)).toEqual(projected);

    // Counters damaged by hand (a bug, an edit): a rebuild counts them again from the rows.
    await sql.query('UPDATE counters SET n = n + 7');
    expect((await store.counts()).projected).not.toBe(projected.counts.projected);
    await rebuild(store);
    expect(await counted(store)).toEqual(await fullCount(sql));
    await sql.query('UPDATE counters SET n = n + 7');
    await rebuild(store, { bulk: false });
    expect(await counted(store)).toEqual(await fullCount(sql));
  } finally {
    await store.close();
  }
}

describe('the counters of a database made by release 0.3.0', () => {
  const tmp = tempDir('prequal-hooks-counters-upgrade-');
  afterAll(() => tmp.cleanup());

  it('SQLite: filled by the migration, kept as pending rows are projected, counted again by rebuild', async () => {
    const path = join(tmp.dir, 'release.db');
    copyFileSync(RELEASE_DB, path);
    await checkUpgrade(path);
  });

  it.skipIf(postgresUrl() === '')(
    'PostgreSQL: filled by the migration, kept as pending rows are projected, counted again by rebuild',
    async () => {
      const url = await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // A plain-SQL dump; psql's meta-commands are not SQL and are left out.
        const dump = readFileSync(RELEASE_DUMP, 'utf8');
        await client.query(
          dump
            .split('\n')
            .filter((line) => !line.startsWith('\\'))
            .join('\n'),
        );
      } finally {
        await client.end();
      }
      await checkUpgrade(url);
    },
  );
});
