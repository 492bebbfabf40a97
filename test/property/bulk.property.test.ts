import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/events/index.js';
import { rebuild, replayInto } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { streamArbitrary } from '../support/arbitraries.js';
import { sqlOn } from '../support/sql.js';
import { emptyTables } from '../support/tables.js';

// The bulk load (SQLite, into an empty database, and rebuild) is another path to the same rows:
// it must store exactly what the batched path stores, inbox and projection, field versions
// included, for any input: repeats in other bytes, bodies that are not events, unknown kinds,
// invalid data, and projection chunks that split a row's effects.

const JUNK = [
  'not json at all',
  '{"event":"candidate.added"}',
  '[1,2,3]',
  '{"event":"candidate.note","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"cmp_A"}}',
  '{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"cmp_A"}}',
  '{"event":"credits.low","timestamp":"yesterday","data":{}}',
];

const reserialised = (event: WebhookEvent, spaced: boolean) =>
  JSON.stringify({ data: event.data, timestamp: event.timestamp, event: event.event }, null, spaced ? 2 : undefined).replace(/\n/g, ' ');

/** Everything a user or a later step reads: inbox rows in order, projected rows with their versions. */
async function snapshot(db: Database.Database) {
  const sql = sqlOn(db);
  return {
    inbox: await sql.query(
      'SELECT identity, raw, raw_sha256, kind, verdict, state, reasons, handler_key, handlers_pending FROM inbox ORDER BY inbox_id',
    ),
    campaigns: await sql.query('SELECT * FROM campaigns ORDER BY campaign_id'),
    candidates: await sql.query('SELECT * FROM candidates ORDER BY candidate_id'),
    responses: await sql.query('SELECT * FROM interview_responses ORDER BY candidate_id, position'),
    credits: await sql.query('SELECT * FROM credits'),
  };
}

describe('a bulk load stores what the batched path stores', () => {
  // The store's connection is the test's: it reads and damages the tables beside the store.
  const db = new Database(':memory:');
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    store = await openStore(db);
    dir = mkdtempSync(join(tmpdir(), 'prequal-bulk-'));
  });
  afterAll(async () => {
    await store.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lines = fc
    .tuple(streamArbitrary(40), fc.array(fc.integer({ min: 0, max: 2 * JUNK.length - 1 }), { maxLength: 8 }))
    .map(([{ delivered }, junk]) => {
      const out = delivered.map((e, i) => (i % 3 === 0 ? reserialised(e, i % 2 === 0) : JSON.stringify(e)));
      // Junk lands at places drawn with it, some of it twice (a retried bad body is one dead letter).
      junk.forEach((j, k) => out.splice((j * 7 + k) % (out.length + 1), 0, JUNK[j % JUNK.length]!));
      return out;
    });

  it('replay into an empty database, row for row', async () => {
    await fc.assert(
      fc.asyncProperty(lines, fc.integer({ min: 1, max: 7 }), fc.boolean(), async (input, batchSize, handlers) => {
        const file = join(dir, 'input.ndjson');
        writeFileSync(file, `${input.join('\n')}\n`);
        const parts = { store, wantsHandlers: handlers ? (kind: string) => kind.startsWith('candidate.') : undefined };
        await emptyTables(db);
        const batched = await replayInto(parts, [file], { batchSize, bulk: false });
        const expected = await snapshot(db);
        await emptyTables(db);
        const bulk = await replayInto(parts, [file], { batchSize });
        expect(bulk).toEqual(batched);
        expect(await snapshot(db)).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('rebuild, row for row, back to what replay stored after the inbox and the projection were damaged', async () => {
    // What an upgrade finds: outcomes a previous version decided differently, rows it projected otherwise.
    const damage = async () => {
      const sql = sqlOn(db);
      await sql.query(`UPDATE inbox SET state = 'dead', reasons = '[]' WHERE verdict = 'accepted' AND inbox_id % 3 = 0`);
      await sql.query(`UPDATE inbox SET state = 'pending' WHERE verdict = 'accepted' AND inbox_id % 5 = 0`);
      await sql.query(`UPDATE candidates SET first_name = 'damaged', field_versions = '|'`);
      await sql.query(`INSERT INTO campaigns (campaign_id) VALUES ('cmp_ghost')`);
    };
    await fc.assert(
      fc.asyncProperty(lines, fc.integer({ min: 1, max: 7 }), async (input, batchSize) => {
        const file = join(dir, 'input.ndjson');
        writeFileSync(file, `${input.join('\n')}\n`);
        await emptyTables(db);
        await replayInto({ store }, [file], { batchSize, bulk: false });
        const replayed = await snapshot(db);
        await damage();
        const batched = await rebuild(store, { batchSize, bulk: false });
        expect(await snapshot(db)).toEqual(replayed);
        await damage();
        const bulk = await rebuild(store, { batchSize });
        expect(bulk).toEqual(batched);
        expect(await snapshot(db)).toEqual(replayed);
      }),
      { numRuns: 100 },
    );
  });
});
