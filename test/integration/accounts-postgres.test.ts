// Several accounts in one PostgreSQL database (docs/projection.md section 9): each account's state
// is its own, whichever process reads it (a replica: a second store on the same database), the same
// ids in two accounts never meet, and removing one account's rows leaves the others; and a database
// written by release 0.3.0 is the default account's, unchanged, once the current code opens it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { projectPending } from '../support/project.js';
import { readEnvelope } from '../../src/events/index.js';
import { eraseCandidate } from '../../src/privacy/erase.js';
import { createQueries } from '../../src/query/index.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { rebuild, replayInto } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { sqlOn } from '../support/sql.js';
import { received } from '../support/bodies.js';

const SCENARIO = fileURLToPath(new URL('../../fixtures/scenarios/campaign-lifecycle.ndjson', import.meta.url));
const RELEASE_DUMP = new URL('../fixtures/databases/0.3.0.postgres.sql', import.meta.url);
const ERASED = 'f332892f-d38e-44df-8ebf-7c9f49065885'; // the first candidate of the scenario
const lines = readFileSync(SCENARIO, 'utf8').trim().split('\n');
/** The same event spelt otherwise: keys in reverse order, spaces (one identity, other bytes). */
const respelt = (line: string) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(line) as object).reverse()), null, 1);

const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function open(url: string): Promise<Store> {
  const store = await openStore(url);
  stores.push(store);
  return store;
}

const freshUrl = () => createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);

const deliver = (account: string, body: string) =>
  deliveryOf(account, Buffer.from(body), readEnvelope(Buffer.from(body)), new Date().toISOString(), null);

/** Projects the view's pending rows as a receiver's projection loop does, until none is left. */
const project = (store: Store) => projectPending(store, { ownAccountOnly: true, batchSize: 100 });

/** An account's projected state as its view reads it: every campaign, candidate (with responses) and the credits. */
async function stateOf(store: Store) {
  const ids: string[] = [];
  for (let page; (page = await store.people.candidateVersions(ids.at(-1) ?? '', 100)).length > 0;)
    ids.push(...page.map((r) => r.candidate_id));
  const campaigns = await Promise.all((await store.projected.campaignIds()).map((id) => store.projected.campaign(id)));
  const candidates = (await store.projected.candidates(ids)).sort((a, b) => (a.candidate_id < b.candidate_id ? -1 : 1));
  const responses = await Promise.all(ids.map(async (id) => [id, await store.projected.responses(id)] as const));
  return { campaigns, candidates, responses, credits: (await store.projected.credits()) ?? null };
}

describe.skipIf(postgresUrl() === '')('accounts on PostgreSQL', () => {
  it('a replica reads each account as its own, and the same events in two accounts are two events that never meet', async () => {
    const url = await freshUrl();
    const primary = await open(url);
    const replica = await open(url);
    const acme = primary.forAccount('acme');
    expect(acme).toBe(primary.forAccount('acme'));
    expect([primary.account, acme.account]).toEqual([DEFAULT_ACCOUNT, 'acme']);

    const first = await replayInto({ store: primary }, SCENARIO);
    const again = await replayInto({ store: acme }, SCENARIO);
    expect(again).toEqual(first); // not duplicates of the default account's
    expect(await replayInto({ store: acme }, SCENARIO)).toMatchObject({ projected: 0, duplicates: lines.length });

    const byDefault = await stateOf(replica);
    expect(byDefault.candidates.length).toBeGreaterThan(10);
    expect(await stateOf(replica.forAccount('acme'))).toEqual(byDefault);
    expect(await createQueries(replica.forAccount('acme')).listCampaigns()).toEqual(await createQueries(replica).listCampaigns());

    // A change in one account, made and projected through the replica, stays in it.
    const renamed = JSON.parse(lines[1]!) as { timestamp: string; data: Record<string, unknown> };
    const later = JSON.stringify({
      event: 'candidate.added',
      timestamp: '2026-12-01T09:00:00.000Z',
      data: { ...renamed.data, first_name: 'Renommée' },
    });
    const candidateId = renamed.data.candidate_id as string;
    const appended = await replica.append([deliver('acme', later), deliver('acme', later), deliver('zeta', later)]);
    expect(appended.map((a) => a.duplicate)).toEqual([false, true, false]);
    expect(await primary.accountsWithWork()).toEqual({ projection: ['acme', 'zeta'], handlers: [] });
    expect(await primary.hasPending()).toBe(false);
    await project(replica.forAccount('acme'));
    expect(await primary.accountsWithWork()).toEqual({ projection: ['zeta'], handlers: [] });
    expect((await acme.projected.candidate(candidateId))?.first_name).toBe('Renommée');
    expect((await primary.projected.candidate(candidateId))?.first_name).not.toBe('Renommée');
    expect(await stateOf(primary)).toEqual(byDefault);
    // zeta's one event made zeta's one candidate, nothing else.
    await project(primary.forAccount('zeta'));
    expect((await stateOf(replica.forAccount('zeta'))).candidates.map((c) => [c.candidate_id, c.first_name])).toEqual([
      [candidateId, 'Renommée'],
    ]);
    expect(await primary.accountsWithWork()).toEqual({ projection: [], handlers: [] });
  });

  it("an erasure, a rebuild and the inbox's reads reach one account; removing an account's rows leaves the others", async () => {
    const url = await freshUrl();
    const primary = await open(url);
    const replica = await open(url);
    const acme = primary.forAccount('acme');
    await replayInto({ store: primary }, SCENARIO);
    await replayInto({ store: acme }, SCENARIO);
    await primary.append([deliver(DEFAULT_ACCOUNT, 'not json at all'), deliver('acme', 'not json at all')]);
    const byDefault = await stateOf(primary);
    const defaultCounts = await primary.counts();

    const report = await eraseCandidate(replica.forAccount('acme'), { candidateId: ERASED }, { reason: 'test' });
    expect(report.candidateIds).toEqual([ERASED]);
    expect(await acme.projected.candidate(ERASED)).toBeUndefined();
    expect(await primary.projected.candidate(ERASED)).toBeDefined();
    expect(await acme.people.erasedAmong([ERASED])).toEqual(new Set([ERASED]));
    expect(await primary.people.erasedAmong([ERASED])).toEqual(new Set());
    const hooks = await primary.write((tx) =>
      tx.claimErasureHooks(new Date(Date.now() + 1000).toISOString(), '2100-01-01T00:00:00.000Z', 10),
    );
    expect(hooks.map((h) => [h.account, h.candidateId])).toEqual([['acme', ERASED]]);

    // A rebuild of acme re-projects acme only: the default account's rows are not touched.
    await rebuild(replica.forAccount('acme'));
    expect(await acme.projected.candidate(ERASED)).toBeUndefined();
    expect(await stateOf(primary)).toEqual(byDefault);
    expect(await primary.counts()).toEqual(defaultCounts);
    expect((await acme.setAside(0, 10)).map((r) => r.account)).toEqual(['acme']);
    expect((await primary.setAside(0, 10)).map((r) => r.account)).toEqual([DEFAULT_ACCOUNT]);
    const acmeIds = await acme.readModel.eventIds({}, 1000);
    const defaultIds = await primary.readModel.eventIds({}, 1000);
    expect(acmeIds.filter((id) => defaultIds.includes(id))).toEqual([]);
    expect(await primary.readModel.event(acmeIds[0]!)).toBeUndefined();
    expect((await primary.inboxRow(acmeIds[0]!))?.account).toBe('acme'); // by inbox id: any account

    const removed = await replica.forAccount('acme').write((tx) => tx.deleteAccountRows());
    expect(removed.inboxRows).toBe(acmeIds.length);
    expect(await acme.counts()).toEqual({ pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: 0 });
    expect(await stateOf(acme)).toEqual({ campaigns: [], candidates: [], responses: [], credits: null });
    expect(await acme.people.latestErasures(10)).toEqual([]);
    expect(await stateOf(primary)).toEqual(byDefault);
    expect(await primary.counts()).toEqual(defaultCounts);
    const left = await sqlOn(url).query<{ account: string; n: number }>(
      `SELECT account, count(*)::int AS n FROM (
         SELECT account FROM inbox UNION ALL SELECT account FROM candidates UNION ALL SELECT account FROM campaigns
         UNION ALL SELECT account FROM interview_responses UNION ALL SELECT account FROM credits UNION ALL SELECT account FROM erasures) t
       GROUP BY account`,
    );
    expect(left.map((r) => r.account)).toEqual([DEFAULT_ACCOUNT]);
    expect(await sqlOn(url).query('SELECT * FROM erasure_hooks')).toEqual([]);
  });

  it('handler keys are per account: a candidate pending in one account does not hold up its namesake in another', async () => {
    const url = await freshUrl();
    const store = await open(url);
    const acme = store.forAccount('acme');
    const body = lines[1]!;
    await store.append([deliver(DEFAULT_ACCOUNT, body)]);
    await acme.append([deliver('acme', body)]);
    const [row] = await acme.write((tx) => tx.claimPending(10));
    expect(row?.account).toBe('acme');
    await acme.write((tx) =>
      tx.settle([{ inboxId: row!.inbox_id, state: 'projected', reasons: null, handlers: true }], new Date().toISOString()),
    );
    expect(await store.accountsWithWork()).toEqual({ projection: [DEFAULT_ACCOUNT], handlers: ['acme'] });
    const claim = { owner: 'o', limit: 10, leaseMs: 60_000, running: new Set<number>() };
    expect(await store.claimHandlers(claim)).toEqual([]);
    expect((await acme.claimHandlers(claim)).map((r) => [r.inbox_id, r.account])).toEqual([[row!.inbox_id, 'acme']]);
  });
});

/** Loads a plain-SQL dump (INSERTs) into a new database; psql's meta-commands are not SQL and are left out. */
async function loadDump(url: string, dump: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      dump
        .split('\n')
        .filter((line) => !line.startsWith('\\'))
        .join('\n'),
    );
  } finally {
    await client.end();
  }
}

describe.skipIf(postgresUrl() === '')('a PostgreSQL database made by release 0.3.0', () => {
  it("opens as the default account's, unchanged: nothing re-projected, redeliveries duplicates, pending rows projected", async () => {
    const url = await freshUrl();
    await loadDump(url, readFileSync(RELEASE_DUMP, 'utf8'));
    const sql = sqlOn(url);
    const inbox = 'SELECT inbox_id, state, attempts, processed_at, handlers_pending, reasons, raw FROM inbox ORDER BY inbox_id';
    // Bodies as received, whichever form they are stored in (before the upgrade: no codec column).
    const inboxRows = async () => {
      const compact = await sql.query(
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'inbox' AND column_name = 'codec'",
      );
      const rows = await sql.query<Record<string, unknown>>(
        inbox.replace(' FROM inbox', compact.length > 0 ? ', codec FROM inbox' : ', NULL AS codec FROM inbox'),
      );
      return rows.map(({ codec, ...row }) => ({ ...row, raw: received({ raw: row.raw as Buffer, codec: codec as number | null }) }));
    };
    const tables: Record<string, string> = {
      campaigns: 'SELECT * FROM campaigns ORDER BY campaign_id',
      candidates: 'SELECT * FROM candidates ORDER BY candidate_id',
      responses: 'SELECT * FROM interview_responses ORDER BY candidate_id, position',
      credits: 'SELECT credits_remaining, low_threshold, last_campaign_id, field_versions FROM credits',
      erasures: 'SELECT * FROM erasures ORDER BY erasure_id',
      failures: 'SELECT * FROM handler_failures ORDER BY failure_id',
    };
    const read = async (): Promise<Record<string, Record<string, unknown>[]>> =>
      Object.fromEntries([
        ['inbox', await inboxRows()],
        ...(await Promise.all(Object.entries(tables).map(async ([k, q]) => [k, await sql.query(q)] as const))),
      ]);
    const without = (rows: unknown[]) => rows.map((r) => Object.fromEntries(Object.entries(r as object).filter(([k]) => k !== 'account')));
    const before = await read();
    expect((await sql.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations'))[0]!.v).toBe(12);
    expect(before.credits).toHaveLength(1);
    expect(before.failures).toHaveLength(2);

    const store = await open(url); // migrates
    const after = await read();
    for (const [table, rows] of Object.entries(after)) expect(without(rows), table).toEqual(before[table]);
    for (const table of ['inbox', 'campaigns', 'candidates', 'interview_responses', 'credits', 'erasures', 'handler_failures']) {
      expect(await sql.query(`SELECT DISTINCT account FROM ${table}`), table).toEqual([{ account: DEFAULT_ACCOUNT }]);
    }
    expect(await store.counts()).toMatchObject({ pending: 9, projected: 37, dead: 1, handler_failures: 2 });
    expect(await store.forAccount('acme').counts()).toMatchObject({ pending: 0, projected: 0, handler_failures: 0 });

    // Every event 0.3.0 stored, sent again as then and spelt otherwise, and the bad body: duplicates.
    for (const body of [...lines, ...lines.map(respelt), 'not json at all']) {
      expect((await store.append([deliver(DEFAULT_ACCOUNT, body)]))[0], body.slice(0, 60)).toEqual({ inboxId: null, duplicate: true });
    }
    // The pending rows are projected now, and only they.
    expect(await store.accountsWithWork()).toEqual({ projection: [DEFAULT_ACCOUNT], handlers: [] });
    await project(store);
    const projectedNow = (await inboxRows()) as unknown as Array<{ inbox_id: number; state: string; attempts: number }>;
    const pendingBefore = new Set(before.inbox!.filter((r) => r.state === 'pending').map((r) => r.inbox_id));
    expect(projectedNow.filter((r) => pendingBefore.has(r.inbox_id)).map((r) => [r.state, r.attempts])).toEqual(
      [...pendingBefore].map(() => ['projected', 1]),
    );
    expect(projectedNow.filter((r) => !pendingBefore.has(r.inbox_id))).toEqual(before.inbox!.filter((r) => !pendingBefore.has(r.inbox_id)));
    const credits = await store.projected.credits();
    expect(credits?.credits_remaining).toBe(0); // credits.depleted, pending in 0.3.0, on the row 0.3.0 made
    expect(await sql.query('SELECT account FROM credits')).toEqual([{ account: DEFAULT_ACCOUNT }]);
    // The erased candidate stays erased, and the tombstone is the default account's.
    expect(await store.projected.candidate(ERASED)).toBeUndefined();
    expect(await store.people.erasedAmong([ERASED])).toEqual(new Set([ERASED]));
  });
});
