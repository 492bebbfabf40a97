// The inbox keeps handler keys as bytes (src/store/handler-keys.ts) and, on SQLite, its instants of
// receipt and processing as Unix ms (src/store/instants.ts). The migrations that rewrite a
// database's rows (SQLite 026, PostgreSQL 024) spell the encoding in SQL: they must give the bytes
// the store writes, for every form of key, and the store must read back what it was given.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { readEnvelope, subjectKey } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { handlerKeyBytes, handlerKeyText } from '../../src/store/handler-keys.js';
import { openStore } from '../../src/store/open.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES } from '../support/engines.js';
import { olderDatabase } from '../support/older-database.js';
import { sqlOn } from '../support/sql.js';

const UUID = '0b7e4c1a-93d2-4f6e-8a55-1c2d3e4f5a6b';

/** Every form a stored text key takes: the service's, the odd ones a release accepted, and by hand. */
const TEXT_KEYS = [
  'credits',
  `candidate:${UUID}`,
  `candidate:${UUID.toUpperCase()}`,
  `candidate:${UUID.replaceAll('-', '')}`,
  'candidate:c1',
  'candidate:12',
  'candidate:Zoë-ü',
  'candidate:',
  'campaign:cmp_k',
  'Candidate:x',
  'account:x',
];

/** The last migration before the one that rewrites keys, per engine. */
const BEFORE = { sqlite: 25, postgres: 23 } as const;

describe.each(ENGINES)('compact keys and instants on $name', (engine) => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it('the migration writes each text key as the store would, and the store reads each back as it was', async () => {
    const database = await olderDatabase(engine, BEFORE[engine.name]);
    const sql = sqlOn(database);
    const received = '2026-11-20T10:00:00.123Z';
    const processed = '2026-11-20T10:00:01.999Z';
    for (const key of [...TEXT_KEYS, null]) {
      await sql.query(
        `INSERT INTO inbox (account, received_at, raw, verdict, state, processed_at, handler_key)
         VALUES ('default', ?, ?, 'accepted', 'projected', ?, ?)`,
        [received, Buffer.from('{}'), processed, key],
      );
    }
    // Opening the store applies the migrations left.
    const store = await openStore(database);
    closing.push(() => store.close());
    const rows = await sql.query<{ handler_key: Buffer | null; received_at: unknown; processed_at: unknown }>(
      'SELECT handler_key, received_at, processed_at FROM inbox ORDER BY inbox_id',
    );
    expect(rows.map((r) => (r.handler_key === null ? null : Buffer.from(r.handler_key).toString('hex')))).toEqual([
      ...TEXT_KEYS.map((k) => handlerKeyBytes(k).toString('hex')),
      null,
    ]);
    expect(rows.map((r) => handlerKeyText(r.handler_key))).toEqual([...TEXT_KEYS, null]);
    // A candidate's key in the service's form takes 17 bytes.
    expect(rows[1]!.handler_key).toHaveLength(17);
    if (engine.name === 'sqlite') {
      const raw = new Database(database, { readonly: true });
      try {
        const times = raw.prepare('SELECT received_at, processed_at FROM inbox LIMIT 1').get();
        expect(times).toEqual({ received_at: Date.parse(received), processed_at: Date.parse(processed) });
      } finally {
        raw.close();
      }
    }
    const [listed] = await store.readModel.listEvents({ candidate: UUID }, { limit: 10 });
    expect(listed).toMatchObject({ candidate_id: UUID, received_at: received, processed_at: processed });
    expect(await store.readModel.oldestPending()).toBeNull();
    expect(await store.readModel.listEvents({ from: received, to: '2026-11-20T10:00:00.124Z' }, { limit: 100 })).toHaveLength(
      TEXT_KEYS.length + 1,
    );
    expect(await store.readModel.listEvents({ from: '2026-11-20T10:00:00.124Z' }, { limit: 100 })).toEqual([]);
    expect(await store.readModel.eventsPerMinute('2026-11-20T09:00:00.000Z')).toEqual([
      { minute: '2026-11-20T10:00', count: TEXT_KEYS.length + 1 },
    ]);
  });

  it('intake stores the key each subject has, and the lists name each candidate and filter by them', async () => {
    const { database } = await engine.fresh();
    const store = await openStore(database);
    closing.push(() => store.close());
    const ids = [UUID, UUID.toUpperCase(), 'c1', 12];
    const events = [
      ...ids.map((id) => sampleEvent('candidate.added', { data: { candidate_id: id, campaign_id: 'cmp_a' } })),
      sampleEvent('campaign.created', { data: { campaign_id: 'cmp_a' } }),
      sampleEvent('credits.low'),
    ];
    const at = new Date().toISOString();
    const deliveries = events.map((e) => {
      const body = Buffer.from(JSON.stringify(e));
      return deliveryOf('default', body, readEnvelope(body), at, null);
    });
    await store.append(deliveries);
    const stored = await sqlOn(database).query<{ handler_key: Buffer }>('SELECT handler_key FROM inbox ORDER BY inbox_id');
    expect(stored.map((r) => handlerKeyText(r.handler_key))).toEqual(events.map((e) => subjectKey(e)));
    for (const id of ids) {
      const found = await store.readModel.listEvents({ candidate: String(id) }, { limit: 10 });
      expect(found.map((e) => e.candidate_id)).toEqual([String(id)]);
    }
    const listed = await store.readModel.listEvents({}, { limit: 10 });
    expect(listed.map((e) => e.candidate_id).reverse()).toEqual([...ids.map(String), null, null]);
    expect(listed.every((e) => e.received_at === at)).toBe(true);
  });
});

describe.each(ENGINES)('a person whose events are far apart on $name', (engine) => {
  it('is found whole by every lookup by key: SQLite probes each block of 4,096 rows of inbox_by_key (migration 027)', async () => {
    const { database } = await engine.fresh();
    const store = await openStore(database);
    try {
      const at = new Date().toISOString();
      const deliver = (event: object) => {
        const body = Buffer.from(JSON.stringify(event));
        return deliveryOf('default', body, readEnvelope(body), at, null);
      };
      const theirs = (n: number) => sampleEvent('candidate.added', { data: { candidate_id: UUID, campaign_id: `cmp_${n}` } });
      // Their first event in the first block, the others past 4,096 and 8,192 rows of others.
      await store.append([deliver(theirs(1))]);
      for (let block = 0; block < 2; block++) {
        const others = Array.from({ length: 4_200 }, (_, i) =>
          deliver(sampleEvent('credits.low', { data: { credits_remaining: block * 10_000 + i } })),
        );
        await store.append(others);
        await store.append([deliver(theirs(block + 2))]);
      }
      expect(await store.readModel.listEvents({ candidate: UUID }, { limit: 10 })).toHaveLength(3);
      expect(await store.people.storedEventsOf(UUID)).toHaveLength(3);
      const named = await store.people.rowsNaming([{ candidate_id: UUID, email: null, phone: null }]);
      expect(named.map((row) => row.candidates)).toEqual([[UUID], [UUID], [UUID]]);
    } finally {
      await store.close();
    }
  });
});
