// A person's changes on PostgreSQL are found by their candidate id alone (migration 025: the index
// `changes_of_candidate` holds no account): an erasure's redaction and the lookup of a candidate's
// changes are served by that index, and reach the account erased, never the same id in another.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { eraseCandidate } from '../../src/privacy/erase.js';
import { replayInto } from '../../src/replay/index.js';
import { candidateChangesSql } from '../../src/store/candidate-changes.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { sqlOn } from '../support/sql.js';

const SCENARIO = fileURLToPath(new URL('../../fixtures/scenarios/campaign-lifecycle.ndjson', import.meta.url));
const ERASED = 'f332892f-d38e-44df-8ebf-7c9f49065885'; // the first candidate of the scenario

const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** The plan of `sql` (`$n` placeholders) with reading the whole table ruled out: which index serves it, if any. */
async function plan(url: string, sql: string, parameters: unknown[]): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET enable_seqscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, parameters);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
  }
}

describe.skipIf(postgresUrl() === '')("a candidate's changes on PostgreSQL", () => {
  it('are found by the id alone, and erased in their own account only', async () => {
    const url = await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
    const store = await openStore(url);
    stores.push(store);
    const acme = store.forAccount('acme');
    await replayInto({ store }, SCENARIO);
    await replayInto({ store: acme }, SCENARIO);
    const sql = sqlOn(url);

    const lookup = candidateChangesSql({ placeholder: (n) => `$${n}`, rows: () => [] }, 'acme', ERASED);
    const found = await plan(url, `${lookup.with} SELECT seq FROM changes WHERE ${lookup.where}`, lookup.parameters);
    expect(found).toMatch(/Index Scan using changes_of_candidate on changes/);
    expect(found).toMatch(/Index Cond: \(id = /);
    const redaction = await plan(url, "SELECT seq FROM changes WHERE account = $1 AND entity = 'candidate' AND id = ANY($2::text[])", [
      'acme',
      [ERASED],
    ]);
    expect(redaction).toMatch(/Index Scan using changes_of_candidate on changes/);
    expect(redaction).toMatch(/Index Cond: \(id = ANY/);

    const rowsOf = (account: string) =>
      sql.query<{ row: string | null }>("SELECT row FROM changes WHERE account = ? AND entity = 'candidate' AND id = ? AND op = 'upsert'", [
        account,
        ERASED,
      ]);
    const before = await rowsOf('default');
    expect(before.length).toBeGreaterThan(0);
    await eraseCandidate(acme, { candidateId: ERASED }, { reason: 'test' });
    for (const { row } of await rowsOf('acme')) expect(JSON.parse(row!)).toEqual({ candidate_id: ERASED, campaign_id: expect.any(String) });
    expect(await rowsOf('default')).toEqual(before);
  });
});
