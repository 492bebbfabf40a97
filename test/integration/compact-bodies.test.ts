// The inbox keeps bodies compact (src/store/bodies.ts). Rows stored before that (no codec) are
// read as they are, the upgrade rewrites them once, in batches that a second run resumes, and an
// erasure leaves nothing of the erased body in the SQLite file, compressed or not.
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { deliveryOf } from '../../src/receive/delivery.js';
import { readEnvelope } from '../../src/events/index.js';
import { storedBody } from '../../src/store/bodies.js';
import { compactedRow } from '../../src/store/compacted-row.js';
import { openStore } from '../../src/store/open.js';
import { compactBodies as compactSqlite } from '../../src/store/sqlite/compact-bodies.js';
import { compactBodies as compactPostgres } from '../../src/store/postgres/compact-bodies.js';
import { createPool } from '../../src/store/postgres/connection.js';
import type { Store } from '../../src/store/store.js';
import { createReceiver } from '../../src/index.js';
import { sampleEvent } from '../../src/testing/index.js';
import { received } from '../support/bodies.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';
import { tempDir } from '../support/servers.js';

const bodies = [
  ...['c1', 'c2', 'c3'].map((id) =>
    Buffer.from(JSON.stringify(sampleEvent('candidate.added', { data: { candidate_id: id, campaign_id: `cmp_${id}` } }))),
  ),
  Buffer.from(JSON.stringify(sampleEvent('campaign.created', { data: { campaign_id: 'cmp_k' } }))),
  Buffer.from(JSON.stringify(sampleEvent('credits.low'))),
  Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x80]), // not UTF-8: a dead letter
  Buffer.from('{"event":"candidate.added","timestamp":"yesterday","data":{}}'),
];

const deliver = (body: Buffer) => deliveryOf('default', body, readEnvelope(body), new Date().toISOString(), null);

/**
 * Rewrites what the store holds as the migration leaves a release's rows before compression: bodies
 * as received, no codec, no campaign, and the rewrite's progress from the first row to the last.
 */
async function asBeforeCompression(database: string): Promise<void> {
  const sql = sqlOn(database);
  const rows = await sql.query<{ inbox_id: number; raw: Buffer; codec: number | null }>(
    'SELECT inbox_id, raw, codec FROM inbox ORDER BY inbox_id',
  );
  for (const row of rows) {
    await sql.query('UPDATE inbox SET raw = ?, codec = NULL, campaign_id = NULL WHERE inbox_id = ?', [received(row), row.inbox_id]);
  }
  await progress(database, { after: 0, last: Number(rows.at(-1)!.inbox_id) });
}

/** Sets the rewrite's progress as a batch commits it. */
async function progress(database: string, value: { after: number; last: number }): Promise<void> {
  const sql = sqlOn(database);
  await sql.query("DELETE FROM settings WHERE key = 'compact_bodies'");
  await sql.query("INSERT INTO settings (key, value, updated_at) VALUES ('compact_bodies', ?, '2026-11-20T10:00:00.000Z')", [
    JSON.stringify(value),
  ]);
}

/** The engine's rewrite, on its own connection. */
async function compact(engine: EngineUnderTest, database: string, batch: number): Promise<number> {
  if (engine.name === 'sqlite') {
    const db = new Database(database);
    try {
      return compactSqlite(db, batch);
    } finally {
      db.close();
    }
  }
  const pool = await createPool(database, { poolSize: 1 });
  try {
    const client = await pool.connect();
    try {
      return await compactPostgres(client, batch);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

/** What a user sees of the inbox: every row's body as the store reads it, and the event lists by campaign. */
async function seen(store: Store) {
  const ids = await store.readModel.eventIds({}, 100);
  const details = await Promise.all(ids.map(async (id) => Buffer.from((await store.readModel.event(id))!.raw).toString('hex')));
  const rows = await Promise.all(ids.map(async (id) => Buffer.from((await store.inboxRow(id))!.raw).toString('hex')));
  const listed = await store.readModel.listEvents({}, { limit: 100 });
  const ofCampaign = await store.readModel.listEvents({ campaign: 'cmp_c2' }, { limit: 100 });
  return {
    details,
    rows,
    campaigns: listed.map((e) => [e.campaign_id, e.candidate_id]),
    ofCampaign: ofCampaign.map((e) => e.inbox_id),
  };
}

describe.each(ENGINES)('compact bodies on $name', (engine) => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it('reads rows stored before compression as they are; the rewrite makes them compact, resumes where it stopped, and changes nothing seen', async () => {
    const { database } = await engine.fresh();
    let store = await openStore(database);
    closing.push(() => store.close());
    await store.append(bodies.map(deliver));
    const compactNow = await seen(store);
    expect(compactNow.details).toEqual(bodies.map((b) => b.toString('hex')));
    expect(compactNow.ofCampaign).toHaveLength(1);
    expect(compactNow.campaigns).toContainEqual(['cmp_c2', 'c2']);
    const sql = sqlOn(database);
    expect(await sql.query('SELECT codec FROM inbox WHERE codec IS NULL')).toEqual([]);
    // A new database has nothing to rewrite: the migration's progress is gone once the store opened.
    expect(await sql.query("SELECT key FROM settings WHERE key = 'compact_bodies'")).toEqual([]);

    await store.close();
    await asBeforeCompression(database);
    // A store opened without migrating reads the old form as it is.
    store = await openStore(database, { migrate: false });
    expect(await seen(store)).toEqual(compactNow);
    await store.close();

    // Cut short after the first batch (the rest still old): both forms are read alike.
    expect(await compact(engine, database, 3)).toBe(bodies.length);
    await asBeforeCompression(database);
    const firstBatch = await sql.query<{ inbox_id: number }>('SELECT inbox_id FROM inbox ORDER BY inbox_id LIMIT 3');
    const firstIds = firstBatch.map((r) => r.inbox_id);
    for (const id of firstIds) {
      const row = (
        await sql.query<{ raw: Buffer; codec: number | null; verdict: string }>(
          'SELECT raw, codec, verdict FROM inbox WHERE inbox_id = ?',
          [id],
        )
      )[0]!;
      const compactRow = compactedRow(received(row), row.verdict);
      await sql.query('UPDATE inbox SET raw = ?, codec = ?, campaign_id = ? WHERE inbox_id = ?', [
        compactRow.bytes,
        compactRow.codec,
        compactRow.campaignId,
        id,
      ]);
    }
    await progress(database, { after: firstIds.at(-1)!, last: Number(firstIds.at(-1)) + bodies.length });
    store = await openStore(database, { migrate: false });
    expect(await seen(store)).toEqual(compactNow);
    await store.close();
    // The next run rewrites exactly the rows left, and a run after it nothing.
    expect(await compact(engine, database, 2)).toBe(bodies.length - firstIds.length);
    expect(await compact(engine, database, 2)).toBe(0);
    expect(await sql.query('SELECT inbox_id FROM inbox WHERE codec IS NULL')).toEqual([]);
    expect(await sql.query("SELECT key FROM settings WHERE key = 'compact_bodies'")).toEqual([]);

    store = await openStore(database);
    expect(await seen(store)).toEqual(compactNow);
    // A redelivery of each body is still a duplicate.
    expect((await store.append(bodies.map(deliver))).every((a) => a.duplicate)).toBe(true);
  });

  it('rewrites the old rows when the store opens (as a start or `prequal-hooks migrate` would)', async () => {
    const { database } = await engine.fresh();
    let store = await openStore(database);
    closing.push(() => store.close());
    await store.append(bodies.map(deliver));
    const before = await seen(store);
    await store.close();
    await asBeforeCompression(database);
    store = await openStore(database);
    const sql = sqlOn(database);
    expect(await sql.query('SELECT inbox_id FROM inbox WHERE codec IS NULL')).toEqual([]);
    expect((await sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM inbox WHERE codec = 1'))[0]!.n).toBeGreaterThanOrEqual(5);
    expect(await seen(store)).toEqual(before);
  });
});

describe('an erased body in a SQLite file', () => {
  const tmp = tempDir('prequal-hooks-compact-erasure-');

  it('leaves nothing of the original, compressed or as received, in the file or its WAL', async () => {
    const event = sampleEvent('candidate.added', {
      data: { candidate_id: 'cand-secret', first_name: 'Zébulon', last_name: 'Quartermaine', email: 'zebulon.q@example.org' },
    });
    const body = Buffer.from(JSON.stringify(event));
    const compact = storedBody(body).bytes;
    const receiver = createReceiver({ database: tmp.dbPath, allowUnsigned: true });
    try {
      await receiver.replay([event]);
      await receiver.drain();
      const file = () => Buffer.concat([readFileSync(tmp.dbPath), readFileSync(`${tmp.dbPath}-wal`, { flag: 'a+' })]);
      // The compact form is what the file holds before: the test would see it.
      expect(file().includes(compact)).toBe(true);
      const report = await receiver.erase({ candidateId: 'cand-secret' }, { reason: 'request' });
      expect(report).toMatchObject({ candidateIds: ['cand-secret'], scrubbed: true });
      const after = file();
      expect(after.includes(compact)).toBe(false);
      expect(after.includes(compact.subarray(0, 48))).toBe(false);
      for (const value of ['Quartermaine', 'zebulon.q@example.org', 'Zébulon']) expect(after.includes(Buffer.from(value))).toBe(false);
    } finally {
      await receiver.close();
      tmp.cleanup();
    }
  });
});
