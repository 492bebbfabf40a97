// The console's reads of the inbox (and of the campaigns) on SQLite, by their query plans. SQLite keeps no statistics
// unless asked: with an index led by the account (inbox_by_received, for the events per minute),
// it took `account = ?` for a selective term, read every row of the account through it and sorted
// them, so the newest page of events (and the overview's oldest pending row) cost the whole inbox.
// A plan does not depend on how many rows there are (no statistics), so an empty database tells it.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createReceiver } from '../../src/index.js';
import { rebuild } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import type { InboxFilter, ReadModel } from '../../src/store/ports/read-model.js';
import { createReadModel } from '../../src/store/read-model-sql.js';
import { SQLITE_READ_DIALECT } from '../../src/store/sqlite/read-model.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES } from '../support/engines.js';

const sqlite = ENGINES.find((engine) => engine.name === 'sqlite')!;
const NO_FILTER: InboxFilter = {};

describe('the inbox reads of the console on SQLite', () => {
  let database: string;
  let cleanup: () => void;
  beforeAll(async () => {
    ({ database, cleanup } = await sqlite.fresh());
    await (await openStore(database)).close();
  });
  afterAll(() => cleanup());

  /** The plan of each statement `read` makes, on the migrated schema; `answer` gives a statement's rows (none by default). */
  async function plansOf(read: (model: ReadModel) => Promise<unknown>, answer: (text: string) => unknown[] = () => []): Promise<string[]> {
    const statements: string[] = [];
    const model = createReadModel(
      SQLITE_READ_DIALECT,
      async <R>({ text }: { text: string }) => (statements.push(text), answer(text) as R[]),
      'default',
    );
    await read(model).catch(() => undefined);
    const check = new Database(database, { readonly: true });
    try {
      return statements.map((sql) =>
        (check.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from(sql.matchAll(/\?/g), () => null)) as Array<{ detail: string }>)
          .map((r) => r.detail)
          .join(' | '),
      );
    } finally {
      check.close();
    }
  }

  it('read the newest events by id, stopping at the page, not every row of the account sorted', async () => {
    const plans = await plansOf((model) => model.listEvents(NO_FILTER, { limit: 100 }));
    expect(plans).toHaveLength(1);
    expect(plans[0]).not.toMatch(/TEMP B-TREE FOR ORDER BY|inbox_by_received/);
  });

  it("read a candidate's events by their handler key, block by block of the index, not by reading every body", async () => {
    const plans = await plansOf((model) => model.listEvents({ candidate: 'cand-1' }, { limit: 201 }));
    // Each block of inbox_by_key probed for the key (migration 027); the person's few rows sorted.
    expect(plans).toEqual([
      expect.stringMatching(/SEARCH inbox USING (COVERING )?INDEX inbox_by_key \(account=\? AND <expr>=\? AND handler_key=\?\)/),
    ]);
    expect(plans[0]).not.toMatch(/SCAN inbox\b/);
  });

  it('find the oldest pending row among the pending ones', async () => {
    expect(await plansOf((model) => model.oldestPending())).toEqual([expect.stringMatching(/inbox_pending/)]);
  });

  it('still read the rows set aside and a range of instants by their indexes', async () => {
    expect(await plansOf((model) => model.listEvents({ states: ['unknown', 'dead'] }, { limit: 100 }))).toEqual([
      expect.stringMatching(/inbox_set_aside/),
    ]);
    expect(await plansOf((model) => model.countEvents({ from: '2026-11-20T10:00:00.000Z', to: '2026-11-20T11:00:00.000Z' }))).toEqual([
      expect.stringMatching(/inbox_by_received/),
    ]);
  });

  it('read a page of campaigns in the order of their index, wherever it starts, never sorting every campaign', async () => {
    const first = await plansOf((model) => model.campaigns({ limit: 51 }));
    const cursor = (undated: number) => (text: string) => (text.includes('AS undated') ? [{ undated }] : []);
    const afterDated = await plansOf((model) => model.campaigns({ after: 'cmp-1', limit: 51 }), cursor(0));
    const afterUndated = await plansOf((model) => model.campaigns({ after: 'cmp-1', limit: 51 }), cursor(1));
    expect([first.length, afterDated.length, afterUndated.length]).toEqual([2, 4, 2]);
    for (const plan of [...first, ...afterDated.slice(1), ...afterUndated.slice(1)])
      expect(plan).toMatch(/^SEARCH c USING INDEX campaigns_by_created \(account=\? AND created_at[=<>]/);
    for (const plan of [...first, ...afterDated, ...afterUndated]) expect(plan).not.toMatch(/TEMP B-TREE|SCAN c\b|SCAN campaigns/);
  });

  it('offer the kinds to filter by from the rows set aside, not from every row', async () => {
    expect(await plansOf((model) => model.kinds())).toEqual([expect.stringMatching(/inbox_set_aside/)]);
  });
});

describe("a rebuild's reads of the inbox on SQLite", () => {
  let database: string;
  let cleanup: () => void;
  beforeAll(async () => {
    ({ database, cleanup } = await sqlite.fresh());
  });
  afterAll(() => cleanup());

  // A rebuild reads the inbox a page at a time after the last id read. Each page must start at that
  // id in the primary key: a plan that sorts (the account's rows through inbox_by_received, then a
  // temporary b-tree) reads the whole account for each page, and a rebuild of a million events
  // never ended.
  it.each([true, false])('read each page from the last id, never sorting the account (bulk: %s)', async (bulk) => {
    const receiver = createReceiver({ database, secret: 'whsec_plans', heartbeat: false });
    await receiver.replay([sampleEvent('campaign.created'), sampleEvent('candidate.added')]);
    await receiver.drain();
    const statements = new Set<string>();
    const original = Database.prototype.prepare; // eslint-disable-line @typescript-eslint/unbound-method -- called with its instance below
    const prepare = vi.spyOn(Database.prototype, 'prepare').mockImplementation(function (this: Database.Database, sql: string) {
      statements.add(sql);
      return original.call(this, sql);
    });
    try {
      await rebuild(await receiver.store(), { bulk });
    } finally {
      prepare.mockRestore();
      await receiver.close();
    }
    const paged = [...statements].filter((sql) => /FROM inbox\b[\s\S]*ORDER BY inbox_id/.test(sql));
    expect(paged.length).toBeGreaterThan(0);
    const check = new Database(database, { readonly: true });
    try {
      for (const sql of paged) {
        const plan = (
          check.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from(sql.matchAll(/\?/g), () => null)) as Array<{ detail: string }>
        )
          .map((r) => r.detail)
          .join(' | ');
        expect(plan, sql).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      }
    } finally {
      check.close();
    }
  });
});
