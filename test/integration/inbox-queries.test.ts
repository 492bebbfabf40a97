import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { prepareInboxQueries, QueryParameterError, type InboxQueries } from '../../src/query/index.js';
import { signedRequest } from '../../src/testing/index.js';
import { storePorts } from '../../src/store/store.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/open.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrations.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/migrations.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/');
const SCENARIO = readFileSync(`${FIXTURES}scenarios/campaign-lifecycle.ndjson`, 'utf8').trim().split('\n');
const SECRET = 'whsec_inbox_queries_5d2e';
const RK4 = 'cmp_Rk4vN8qWz2';
const ELOISE = 'f332892f-d38e-44df-8ebf-7c9f49065885';

describe.each(ENGINES)('inbox queries of the console ($name)', (engine) => {
  let receiver: Receiver;
  let inbox: InboxQueries;
  let cleanup: () => void;
  let database: string;
  beforeAll(async () => {
    const fresh = await engine.fresh();
    database = fresh.database;
    cleanup = fresh.cleanup;
    receiver = createReceiver({ database: fresh.database, secret: SECRET, dispatch: { handlerAttempts: 1, handlerRetryDelayMs: 1 } });
    receiver.on(
      'candidate.added',
      async () => {
        throw new Error('the CRM is down');
      },
      { name: 'crm' },
    );
    await receiver.ready();
    const send = async (body: string) => {
      const request = signedRequest(body, { secret: SECRET });
      return receiver.receive({ rawBody: request.body, headers: request.headers });
    };
    for (const line of SCENARIO) await send(line);
    await send(readFileSync(`${FIXTURES}invalid/unknown-kind.json`, 'utf8'));
    await send(readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8'));
    await send(readFileSync(`${FIXTURES}invalid/not-json.txt`, 'utf8'));
    // A body with a NUL escape: valid JSON that PostgreSQL's jsonb would refuse.
    await send(
      JSON.stringify({ event: 'candidate.note', timestamp: '2026-11-20T10:00:00Z', data: { candidate_id: ELOISE, note: 'a\u0000b' } }),
    );
    await receiver.drain();
    inbox = prepareInboxQueries(storePorts(await receiver.store()));
  });
  afterAll(async () => {
    await receiver.close();
    cleanup();
  });

  it('list every row newest first, and page on with the cursor', async () => {
    const first = await inbox.listEvents({ limit: 20 });
    expect(first.events).toHaveLength(20);
    const ids = first.events.map((e) => e.inbox_id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const all = [...first.events];
    for (let before = first.next; before !== null;) {
      const page = await inbox.listEvents({ limit: 20, before });
      all.push(...page.events);
      before = page.next;
    }
    expect(all).toHaveLength(SCENARIO.length + 4);
    const counts = await receiver.counts();
    expect(all.filter((e) => e.state === 'dead')).toHaveLength(counts.dead);
    expect(all.filter((e) => e.state === 'unknown')).toHaveLength(counts.unknown);
  });

  it('filter by kind, state, campaign, candidate and time, not breaking on bodies that are not JSON', async () => {
    const added = await inbox.listEvents({ kind: 'candidate.added', limit: 500 });
    expect(added.events.length).toBe(SCENARIO.filter((l) => l.includes('"candidate.added"')).length);
    expect(added.events.every((e) => e.kind === 'candidate.added' && e.candidate_id !== null)).toBe(true);

    const rk4 = await inbox.listEvents({ campaign: RK4, limit: 500 });
    expect(rk4.events.length).toBe(
      SCENARIO.filter((l) => (JSON.parse(l) as { data: { campaign_id?: string } }).data.campaign_id === RK4).length,
    );
    expect(rk4.events.every((e) => e.campaign_id === RK4)).toBe(true);

    const eloise = await inbox.listEvents({ candidate: ELOISE, limit: 500 });
    // Found by its handler key, though PostgreSQL text cannot hold the NUL of its body.
    expect(eloise.events.length).toBe(SCENARIO.filter((l) => l.includes(ELOISE)).length + 1);
    expect(eloise.events[0]!.kind).toBe('candidate.note');
    // Only accepted bodies name a candidate: the rows without a handler key are bodies that are not envelopes.
    const unkeyed = await sqlOn(database).query<{ verdict: string }>('SELECT verdict FROM inbox WHERE handler_key IS NULL');
    expect(unkeyed.map((r) => r.verdict)).toEqual(['invalid_json']);

    const setAside = await inbox.listEvents({ state: ['unknown', 'dead'] });
    expect(setAside.events.every((e) => e.reasons.length > 0)).toBe(true);
    expect(setAside.events.map((e) => String(e.kind)).sort()).toEqual([
      'candidate.interview.completed',
      'candidate.interview.rescheduled',
      'candidate.note',
      'null',
    ]);
    expect(await inbox.countEvents({ state: 'dead' })).toMatchObject({ count: 2 });

    expect((await inbox.listEvents({ from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00+01:00', limit: 500 })).events).toHaveLength(
      SCENARIO.length + 4,
    );
    expect((await inbox.listEvents({ from: '2100-01-01T00:00:00Z' })).events).toHaveLength(0);
    await expect(inbox.listEvents({ from: 'yesterday' })).rejects.toBeInstanceOf(QueryParameterError);
    await expect(inbox.listEvents({ limit: 0 })).rejects.toBeInstanceOf(QueryParameterError);
  });

  it('give one row with its body as received, verdict, reasons and the secret that matched', async () => {
    const [dead] = (await inbox.listEvents({ state: 'dead', kind: 'candidate.interview.completed' })).events;
    const detail = await inbox.getEvent(dead!.inbox_id);
    expect(detail).toMatchObject({ state: 'dead', verdict: 'accepted', kind: 'candidate.interview.completed' });
    expect(detail!.raw).toBe(readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8'));
    expect(detail!.secret_id).toMatch(/\S/);
    expect(detail!.reasons).toEqual([
      { path: 'data.candidate_id', message: 'Invalid input: expected string, received undefined' },
      { path: 'data.interview_score', message: 'Invalid input: expected number, received string' },
    ]);
    expect(await inbox.getEvent(999_999)).toBeUndefined();
  });

  it('count rows per minute over the last hour, and the oldest pending', async () => {
    const minutes = await inbox.eventsPerMinute(60);
    expect(minutes).toHaveLength(60);
    expect(minutes.reduce((sum, m) => sum + m.count, 0)).toBe(SCENARIO.length + 4);
    expect(minutes.map((m) => m.minute)).toEqual([...minutes.map((m) => m.minute)].sort());
    expect(await inbox.oldestPending()).toBeNull();
    expect(await inbox.kinds()).toContain('candidate.interview.rescheduled');
  });

  it('list and count handler failures with their kind, filtered by handler and kind', async () => {
    const failures = await inbox.handlerFailures();
    const added = SCENARIO.filter((l) => l.includes('"candidate.added"')).length;
    expect(failures).toHaveLength(added);
    expect(failures[0]).toMatchObject({ kind: 'candidate.added', handler: 'crm' });
    expect(failures[0]!.error).toContain('the CRM is down');
    expect(await inbox.countHandlerFailures({ handler: 'crm', kind: 'candidate.added' })).toMatchObject({ count: added });
    expect(await inbox.countHandlerFailures({ handler: 'other' })).toEqual({ count: 0, upTo: null });
  });

  it('search a filter that no index serves a window of ids a page, and find every match by following next', async () => {
    const all = (await inbox.listEvents({ limit: 500 })).events;
    const newest = all[0]!.inbox_id;
    const completed = all.filter((e) => e.kind === 'candidate.interview.completed').map((e) => e.inbox_id);
    expect(completed.length).toBeGreaterThan(1);
    const windowed = prepareInboxQueries(storePorts(await receiver.store()), { searchWindow: 7 });
    const first = await windowed.listEvents({ kind: 'candidate.interview.completed', limit: 50 });
    // The newest 7 ids only, however many match further back; then next searches on below them.
    expect(first.searched).toEqual({ from: newest - 6, to: newest });
    expect(first.events.every((e) => e.inbox_id > newest - 7)).toBe(true);
    expect(first.next).toBe(newest - 6);
    const found = [...first.events];
    let pages = 1;
    for (let before = first.next; before !== null; pages++) {
      const page = await windowed.listEvents({ kind: 'candidate.interview.completed', limit: 50, before });
      expect(page.searched).toEqual({ from: Math.max(1, before - 7), to: before - 1 });
      found.push(...page.events);
      before = page.next;
    }
    expect(found.map((e) => e.inbox_id)).toEqual(completed);
    expect(pages).toBe(Math.ceil(newest / 7));
    // A page that fills before its window ends pages on from its last row, as an indexed one does.
    const wide = prepareInboxQueries(storePorts(await receiver.store()), { searchWindow: 1000 });
    const full = await wide.listEvents({ kind: 'candidate.interview.completed', limit: 1 });
    expect(full.next).toBe(completed[0]);
    // An index serves these: no window.
    expect((await windowed.listEvents({ candidate: ELOISE, limit: 50 })).searched).toBeNull();
    expect((await windowed.listEvents({ state: ['unknown', 'dead'], kind: 'candidate.added', limit: 50 })).searched).toBeNull();
    expect((await windowed.listEvents({ limit: 5 })).searched).toBeNull();
  });

  it('read the same whatever the store calls its location: the engine, not a log string, picks the SQL', async () => {
    const store = storePorts(await receiver.store());
    // The same ports under a label that names the other engine.
    const relabelled = { ...store, location: engine.name === 'sqlite' ? 'postgres://elsewhere/db' : 'sqlite:./looks-like.db' };
    const renamed = prepareInboxQueries(relabelled);
    expect(await renamed.listEvents({ limit: 50, campaign: RK4 })).toEqual(await inbox.listEvents({ limit: 50, campaign: RK4 }));
    expect(await renamed.listEvents({ limit: 50, candidate: ELOISE })).toEqual(await inbox.listEvents({ limit: 50, candidate: ELOISE }));
    const now = Date.now();
    const minutes = await renamed.eventsPerMinute(5, now);
    expect(minutes).toEqual(await inbox.eventsPerMinute(5, now));
    expect(minutes.reduce((sum, m) => sum + m.count, 0)).toBe((await inbox.countEvents()).count);
  });
});

describe.each(ENGINES)('inbox queries on a body nested 100,000 levels ($name)', (engine) => {
  it('list and filter by campaign and candidate without failing, the deep row just not matching', async () => {
    const fresh = await engine.fresh();
    const receiver = createReceiver({ database: fresh.database, secret: SECRET });
    try {
      await receiver.ready();
      // Valid JSON (the intake takes any depth JSON.parse does) that the engines' JSON readers give up on.
      const deep = `{"event":"candidate.deep","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"${RK4}","candidate_id":"c-deep","nest":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
      const shallow = JSON.stringify({
        event: 'candidate.note',
        timestamp: '2026-11-20T10:00:00Z',
        data: { campaign_id: RK4, candidate_id: 'c-1' },
      });
      for (const body of [deep, shallow]) {
        const request = signedRequest(body, { secret: SECRET });
        expect((await receiver.receive({ rawBody: request.body, headers: request.headers })).answer.status).toBe(200);
      }
      await receiver.drain();
      const inbox = prepareInboxQueries(storePorts(await receiver.store()));
      expect((await inbox.listEvents({ limit: 10 })).events).toHaveLength(2);
      expect((await inbox.listEvents({ limit: 10, campaign: RK4 })).events.map((e) => e.kind)).toContain('candidate.note');
      expect((await inbox.listEvents({ limit: 10, candidate: 'c-1' })).events.map((e) => e.kind)).toEqual(['candidate.note']);
    } finally {
      await receiver.close();
      fresh.cleanup();
    }
  });
});

/** A database at the schema before handler keys (migration 6), holding one event about `candidate` as that version stored it. */
async function beforeHandlerKeys(engine: EngineUnderTest, candidate: string): Promise<{ database: string; cleanup: () => void }> {
  const { database, cleanup } = await engine.fresh();
  const raw = Buffer.from(
    JSON.stringify({ event: 'candidate.added', timestamp: '2026-11-20T10:00:00Z', data: { candidate_id: candidate } }),
  );
  const row = ['2026-11-20T10:00:01.000Z', raw, 'a'.repeat(64), 'candidate.added', 'accepted', 'pending'];
  const migrations = loadMigrations(engine.name).filter((m) => m.version < 6);
  if (engine.name === 'postgres') {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    await migratePostgres(client as unknown as pg.PoolClient, undefined, migrations);
    await client.query('INSERT INTO inbox (received_at, raw, identity, kind, verdict, state) VALUES ($1, $2, $3, $4, $5, $6)', row);
    await client.end();
  } else {
    const db = new Database(database);
    migrateSqlite(db, migrations);
    db.prepare('INSERT INTO inbox (received_at, raw, identity, kind, verdict, state) VALUES (?, ?, ?, ?, ?, ?)').run(...row);
    db.close();
  }
  return { database, cleanup };
}

describe.each(ENGINES)('inbox queries on a database from before handler keys ($name)', (engine) => {
  it("find an event stored then among its candidate's, by the key the upgrade gave it", async () => {
    const { database, cleanup } = await beforeHandlerKeys(engine, 'cand-before-keys');
    const store = await openStore(database);
    try {
      const inbox = prepareInboxQueries(store);
      expect((await inbox.listEvents({ candidate: 'cand-before-keys' })).events.map((e) => e.kind)).toEqual(['candidate.added']);
      expect((await inbox.listEvents({ candidate: 'someone-else' })).events).toEqual([]);
    } finally {
      await store.close();
      cleanup();
    }
  });
});
