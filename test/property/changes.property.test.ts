import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIdentity, type WebhookEvent } from '../../src/events/index.js';
import { eraseCandidate } from '../../src/privacy/erase.js';
import { rebuild } from '../../src/replay/rebuild.js';
import { replayInto } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { streamArbitrary } from '../support/arbitraries.js';
import { ENGINES, freshStore, type EngineUnderTest } from '../support/engines.js';
import { emptyTables, foldChanges, readChanges, readStoreTables, type ChangeRead } from '../support/tables.js';

// docs/projection.md section 10 on each engine, through the store: the fold of an account's
// changes in `seq` order is its projected state, whatever the order, repetition and batching of
// its events; repeats, rebuilds that change nothing and erasures leave the feed as the section says.

const withoutResponses = async (database: string) => {
  const { interview_responses: _, ...tables } = await readStoreTables(database);
  return tables;
};

/** Numbers from 1, each once, in order (one writer here: no gaps either). */
function expectNumbered(changes: readonly ChangeRead[]): void {
  expect(changes.map((c) => c.seq)).toEqual(changes.map((_, i) => i + 1));
}

describe.each(ENGINES)('on $name: the changes of an account fold into its projected state', (engine: EngineUnderTest) => {
  let store: Store;
  let database: string;
  let close: () => Promise<void>;
  const runs = (sqlite: number) => (engine.name === 'sqlite' ? sqlite : Math.ceil(sqlite / 4));
  beforeAll(async () => {
    ({ store, database, close } = await freshStore(engine));
  });
  afterAll(() => close());

  it('any order, repetition and batching: numbered from 1, folding into the tables, naming the events that made them', async () => {
    await fc.assert(
      fc.asyncProperty(streamArbitrary(40), fc.integer({ min: 1, max: 7 }), fc.nat(40), async ({ delivered }, batchSize, cut) => {
        await emptyTables(database);
        // A first part into the empty database (SQLite loads it in bulk), the rest in batches.
        await replayInto({ store }, delivered.slice(0, cut), { batchSize });
        await replayInto({ store }, delivered, { batchSize });
        const changes = await readChanges(database);
        expectNumbered(changes);
        expect(foldChanges(changes)).toEqual(await withoutResponses(database));
        const identities = new Set(delivered.map((e) => eventIdentity(e)));
        for (const change of changes) {
          expect(change.events.length).toBeGreaterThan(0);
          for (const identity of change.events) expect(identities.has(identity)).toBe(true);
        }
        // The same events again change nothing, and record nothing.
        await replayInto({ store }, delivered, { batchSize });
        expect(await readChanges(database)).toHaveLength(changes.length);
      }),
      { numRuns: runs(60) },
    );
  });

  it('a rebuild that finds the same state records nothing; one that finds another records the difference', async () => {
    await fc.assert(
      fc.asyncProperty(streamArbitrary(30), fc.boolean(), async ({ delivered }, bulk) => {
        await emptyTables(database);
        await replayInto({ store }, delivered, { batchSize: 5 });
        const before = await readChanges(database);
        await rebuild(store, { bulk });
        expect(await readChanges(database)).toEqual(before);
        // A row changed behind the projection's back: the rebuild puts it right, and says so.
        const sql = (await import('../support/sql.js')).sqlOn(database);
        await sql.query("UPDATE campaigns SET job_title = 'tampered' WHERE account = 'default'");
        await sql.query("INSERT INTO campaigns (account, campaign_id, field_versions) VALUES ('default', 'ghost', '')");
        await rebuild(store, { bulk });
        const after = await readChanges(database);
        expectNumbered(after);
        expect(after.slice(0, before.length)).toEqual(before);
        expect(after.slice(before.length).some((c) => c.entity === 'campaign' && c.id === 'ghost' && c.op === 'erase')).toBe(true);
        expect(foldChanges(after)).toEqual(await withoutResponses(database));
      }),
      { numRuns: runs(25) },
    );
  });

  it("an erasure reduces the person's earlier changes to keys and records one erase: nothing recorded holds their data", async () => {
    await fc.assert(
      fc.asyncProperty(streamArbitrary(30), async ({ delivered }) => {
        await emptyTables(database);
        await replayInto({ store }, delivered, { batchSize: 4 });
        const named = delivered.flatMap((e: WebhookEvent) => {
          const id = (e.data as { candidate_id?: unknown }).candidate_id;
          return typeof id === 'string' ? [id] : [];
        });
        fc.pre(named.length > 0);
        const person = named[0]!;
        await eraseCandidate(store, { candidateId: person }, { reason: 'property' });
        const changes = await readChanges(database);
        expectNumbered(changes);
        const theirs = changes.filter((c) => c.entity === 'candidate' && c.id === person);
        expect(theirs.at(-1)?.op).toBe('erase');
        expect(theirs.filter((c) => c.op === 'erase')).toHaveLength(1);
        for (const change of theirs.filter((c) => c.op === 'upsert')) {
          expect(Object.keys(change.row!).sort()).toEqual(['campaign_id', 'candidate_id']);
        }
        expect(foldChanges(changes)).toEqual(await withoutResponses(database));
      }),
      { numRuns: runs(40) },
    );
  });
});
