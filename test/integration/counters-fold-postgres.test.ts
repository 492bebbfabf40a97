// PostgreSQL's counters are per server process (migration 015: slot = the backend's pid), folded
// into slot 0 by `fold_counters()` once their backend is gone. Two stores on one database, each with
// its own pool (two replicas), write at once while folds run beside them and one store closes: the
// slots of the gone backends are folded away, and every counter (the sum of its slots) equals a
// full count of the rows, before and after each fold.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { projectPending } from '../support/project.js';
import { waitFor } from '../support/wait-for.js';

const AT = '2026-11-22T00:00:00.000Z';

/** Deliveries of candidates in two campaigns, some interviewed (scores), some redelivered, some set aside. */
async function deliver(store: Store, writer: string, n: number): Promise<void> {
  const bodies: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const candidate = `${writer}-${i}`;
    const campaign = i % 2 === 0 ? 'cmp_even' : 'cmp_odd';
    bodies.push(Buffer.from(JSON.stringify(sampleEvent('candidate.added', { data: { campaign_id: campaign, candidate_id: candidate } }))));
    const data = { campaign_id: campaign, candidate_id: candidate };
    if (i % 3 === 0)
      bodies.push(
        Buffer.from(JSON.stringify(sampleEvent('candidate.interview.completed', { data: { ...data, interview_score: (i % 10) + 0.25 } }))),
      );
    else if (i % 3 === 1) bodies.push(Buffer.from(JSON.stringify(sampleEvent('candidate.interview.failed', { data }))));
    if (i % 7 === 0) bodies.push(bodies[bodies.length - 1]!); // a redelivery: a duplicate, not counted again
    if (i % 11 === 0) bodies.push(Buffer.from(`not json ${candidate}`)); // dead
  }
  // A few at a time, so that several connections of the pool take part.
  for (let i = 0; i < bodies.length; i += 5)
    await store.append(bodies.slice(i, i + 5).map((raw) => deliveryOf(store.account, raw, readEnvelope(raw), AT, null)));
}

/** Every counter as the sum of its slots, and the same figures counted from the rows. */
async function countersAndRows(sql: pg.Client) {
  const counters = await sql.query<{ name: string; key: string; n: string; total: string }>(
    `SELECT name, key, SUM(n)::text AS n, SUM(total)::text AS total FROM counters WHERE account = 'default'
     GROUP BY name, key HAVING SUM(n) <> 0 OR SUM(total) <> 0 ORDER BY name, key`,
  );
  const rows = await sql.query<{ name: string; key: string; n: string; total: string }>(
    `SELECT name, key, n::text, total::text FROM (
       SELECT 'inbox' AS name, state AS key, COUNT(*) AS n, 0::bigint AS total FROM inbox WHERE account = 'default' GROUP BY state
       UNION ALL SELECT 'handler_failures', '', COUNT(*), 0 FROM handler_failures WHERE account = 'default' HAVING COUNT(*) > 0
       UNION ALL SELECT 'candidates', campaign_id, COUNT(*), 0 FROM candidates WHERE account = 'default' AND campaign_id IS NOT NULL GROUP BY campaign_id
       UNION ALL SELECT 'candidates:' || status, campaign_id, COUNT(*), 0 FROM candidates
         WHERE account = 'default' AND campaign_id IS NOT NULL AND status IS NOT NULL GROUP BY campaign_id, status
       UNION ALL SELECT 'scores', campaign_id, COUNT(*), SUM(floor(interview_score * 1000000000 + 0.5)::bigint) FROM candidates
         WHERE account = 'default' AND campaign_id IS NOT NULL AND status = 'completed' AND interview_score IS NOT NULL GROUP BY campaign_id
     ) counted ORDER BY name, key`,
  );
  return { counters: counters.rows, rows: rows.rows };
}

async function slots(sql: pg.Client): Promise<number[]> {
  return (await sql.query<{ slot: number }>('SELECT DISTINCT slot FROM counters ORDER BY slot')).rows.map((r) => r.slot);
}

/** Until none of these backends is listed any more (a closed connection's backend exits a moment later). */
async function gone(sql: pg.Client, pids: readonly number[]): Promise<void> {
  await waitFor(
    async () => (await sql.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids])).rows.length === 0,
    5000,
    `backends ${pids.join(', ')} to be listed no more`,
    { everyMs: 50 },
  );
}

describe.skipIf(postgresUrl() === '')('PostgreSQL counters folded by fold_counters()', () => {
  const clients: pg.Client[] = [];
  afterAll(async () => {
    for (const client of clients) await client.end();
  });
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  };

  it('equal a full count with two stores writing at once, while folds run and one store goes away', async () => {
    const url = await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
    const first = await openStore(url, { poolSize: 3 });
    const second = await openStore(url, { poolSize: 3 });
    const sql = await connect(url);
    const folder = await connect(url);
    try {
      // The first store alone: its backends' slots.
      await deliver(first, 'a0', 30);
      await projectPending(first);
      const ownSlots = (await slots(sql)).filter((slot) => slot !== 0);
      expect(ownSlots.length).toBeGreaterThan(0);

      // Both at once, projecting too, with folds beside them (two at a time: one is skipped).
      let writing = true;
      const folds = (async () => {
        let n = 0;
        while (writing) {
          await Promise.all([folder.query('SELECT fold_counters()'), sql.query('SELECT fold_counters()')]);
          n++;
        }
        return n;
      })();
      await Promise.all([
        deliver(first, 'a1', 40).then(() => projectPending(first)),
        deliver(second, 'b1', 40).then(() => projectPending(second)),
      ]);
      writing = false;
      expect(await folds).toBeGreaterThan(0);
      const both = await countersAndRows(sql);
      expect(both.counters).toEqual(both.rows);
      const live = (await slots(sql)).filter((slot) => slot !== 0);
      expect(live.some((slot) => !ownSlots.includes(slot))).toBe(true); // the second store's backends

      // The first store goes away: its backends' slots are folded into slot 0, and nothing changes in the sums.
      await first.close();
      await gone(sql, ownSlots);
      await deliver(second, 'b2', 20);
      await Promise.all([folder.query('SELECT fold_counters()'), projectPending(second)]);
      await sql.query('SELECT fold_counters()');
      const folded = await countersAndRows(sql);
      expect(folded.counters).toEqual(folded.rows);
      const after = await slots(sql);
      expect(after).toContain(0);
      expect(after.filter((slot) => ownSlots.includes(slot))).toEqual([]);
      expect(folded.rows.find((r) => r.name === 'inbox' && r.key === 'dead')).toBeDefined();
      expect(folded.rows.find((r) => r.name === 'scores')).toBeDefined();

      // Folding again changes nothing: no slot is added twice.
      await sql.query('SELECT fold_counters()');
      expect((await countersAndRows(sql)).counters).toEqual(folded.rows);
      expect(await second.counts()).toMatchObject({
        dead: Number(folded.rows.find((r) => r.name === 'inbox' && r.key === 'dead')!.n),
        projected: Number(folded.rows.find((r) => r.name === 'inbox' && r.key === 'projected')!.n),
        pending: 0,
      });
    } finally {
      await first.close();
      await second.close();
    }
  });
});
