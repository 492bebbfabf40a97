// The console's reads whose cost must not grow with the database, by their plans on PostgreSQL.
// An empty table is read whole whatever its indexes, so the plans are asked with sequential scans
// and sorts priced out: what remains says whether an index can serve the read in its order.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { ReadModel } from '../../src/store/ports/read-model.js';
import { createReadModel } from '../../src/store/read-model-sql.js';
import { POSTGRES_READ_DIALECT } from '../../src/store/postgres/read-model.js';
import { ENGINES } from '../support/engines.js';

const postgres = ENGINES.find((engine) => engine.name === 'postgres');

describe.skipIf(postgres === undefined)('the console reads on PostgreSQL', () => {
  let client: pg.Client;
  beforeAll(async () => {
    const { database } = await postgres!.fresh();
    await (await openStore(database)).close();
    client = new pg.Client({ connectionString: database });
    await client.connect();
    await client.query('SET enable_seqscan = off');
    await client.query('SET enable_sort = off');
  });
  afterAll(async () => {
    await client.end();
  });

  /** The plan of each statement `read` makes; `answer` gives a statement's rows (none by default). */
  async function plansOf(read: (model: ReadModel) => Promise<unknown>, answer: (text: string) => unknown[] = () => []): Promise<string[]> {
    const statements: Array<{ text: string; values: unknown[] }> = [];
    const model = createReadModel(
      POSTGRES_READ_DIALECT,
      async <R>(statement: { text: string; values: unknown[] }) => (statements.push(statement), answer(statement.text) as R[]),
      'default',
    );
    await read(model);
    const plans: string[] = [];
    for (const { text, values } of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
      plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
    }
    return plans;
  }

  it("read a candidate's events through the index by handler key, newest first", async () => {
    const [plan] = await plansOf((model) => model.listEvents({ candidate: 'cand-1' }, { limit: 201 }));
    expect(plan).toMatch(/Index Scan Backward using inbox_by_key on inbox/);
    expect(plan).toMatch(/Index Cond: \(\(account = .*\) AND \(handler_key = .*\)\)/);
    expect(plan).not.toMatch(/Seq Scan on inbox|Sort\b|Filter:/);
  });

  it('read a page of campaigns in the order of their index, wherever it starts', async () => {
    const cursor = (undated: boolean) => (text: string) => (text.includes('AS undated') ? [{ undated }] : []);
    const plans = [
      ...(await plansOf((model) => model.campaigns({ limit: 51 }))),
      ...(await plansOf((model) => model.campaigns({ after: 'cmp-1', limit: 51 }), cursor(false))).slice(1),
      ...(await plansOf((model) => model.campaigns({ after: 'cmp-1', limit: 51 }), cursor(true))).slice(1),
    ];
    expect(plans).toHaveLength(2 + 3 + 1);
    for (const plan of plans) {
      expect(plan).toMatch(/-> {2}Index Scan using campaigns_(by_created|undated) on campaigns c/);
      expect(plan).not.toMatch(/Seq Scan|Sort\b|Filter:/);
    }
  });
});
