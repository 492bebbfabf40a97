// The inbox files an identity under its event's instant (0.3.0: the unique index grows at its
// right edge). Duplicates must be found exactly as docs/projection.md section 1 says whatever the
// filing: dated, undated (a timestamp outside the contract), or stored before the upgrade.
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { migrate as migratePostgres } from '../../src/store/postgres/migrations.js';
import { migrate as migrateSqlite } from '../../src/store/sqlite/migrations.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';

const body = (event: string, timestamp: string, candidate: string, spacing = 0) =>
  Buffer.from(
    JSON.stringify({ event, timestamp, data: { candidate_id: candidate, campaign_id: 'cmp-key', first_name: 'Aïcha' } }, null, spacing),
  );
const delivery = (raw: Buffer) => deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), new Date().toISOString(), null);
const appendOne = (store: Store, raw: Buffer) => store.write(async (tx) => (await tx.append([delivery(raw)]))[0]!);
const stored = async (store: Store) => {
  const c = await store.counts();
  return c.pending + c.projected + c.unknown + c.dead;
};
const identityKey = (raw: Buffer) => {
  const d = delivery(raw);
  return { identity: d.identity!, eventAt: d.eventAt };
};

/** A database at the schema before 0.3.0 (SQLite 11, PostgreSQL 10), holding one event as that version filed it. */
async function previousRelease(engine: EngineUnderTest, raw: Buffer): Promise<{ database: string; cleanup: () => void }> {
  const { database, cleanup } = await engine.fresh();
  const { identity, handlerKey } = delivery(raw);
  const row = ['2026-11-20T10:00:00.000Z', raw, identity, 'candidate.added', 'accepted', 'projected', handlerKey];
  if (engine.name === 'postgres') {
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    await migratePostgres(
      client as unknown as pg.PoolClient,
      undefined,
      loadMigrations('postgres').filter((m) => m.version <= 10),
    );
    await client.query(
      'INSERT INTO inbox (received_at, raw, identity, kind, verdict, state, handler_key) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      row,
    );
    await client.end();
  } else {
    const db = new Database(database);
    migrateSqlite(
      db,
      loadMigrations('sqlite').filter((m) => m.version <= 11),
    );
    db.prepare('INSERT INTO inbox (received_at, raw, identity, kind, verdict, state, handler_key) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      ...row,
    );
    db.close();
  }
  return { database, cleanup };
}

describe.each(ENGINES)('the identity key ($name)', (engine) => {
  const open: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of open.splice(0).reverse()) await close();
  });

  async function storeOn(database: string): Promise<Store> {
    const store = await openStore(database);
    open.push(() => store.close());
    return store;
  }

  it('an event stored before the upgrade is still a duplicate, in any spelling; `known` finds it', async () => {
    const old = body('candidate.added', '2026-11-20T10:00:00Z', 'cand-old');
    const { database, cleanup } = await previousRelease(engine, old);
    open.push(cleanup);
    const store = await storeOn(database);
    expect(await appendOne(store, old)).toEqual({ inboxId: null, duplicate: true });
    expect(await appendOne(store, body('candidate.added', '2026-11-20T10:00:00Z', 'cand-old', 2))).toEqual({
      inboxId: null,
      duplicate: true,
    });
    expect(await store.write((tx) => tx.known([identityKey(old)]))).toEqual(new Set([identityKey(old).identity]));
    expect(await stored(store)).toBe(1);
  });

  it('dated and undated events: stored once each, whatever the spelling, and found by `known`', async () => {
    const { database, cleanup } = await engine.fresh();
    open.push(cleanup);
    const store = await storeOn(database);
    // Same instant, other spelling of the timestamp: two events (two identities), one instant.
    const dated = [body('candidate.added', '2026-11-20T10:00:00Z', 'c1'), body('candidate.added', '2026-11-20T11:00:00+01:00', 'c1')];
    // Outside the contract's form: no instant, kept (and later set aside) all the same.
    const undated = body('candidate.added', '2026-11-20 10:00:00', 'c2');
    for (const raw of [...dated, undated]) expect((await appendOne(store, raw)).duplicate).toBe(false);
    for (const raw of [...dated, undated]) {
      const respelt = Buffer.from(JSON.stringify(JSON.parse(raw.toString()), null, 3));
      expect(await appendOne(store, respelt)).toEqual({ inboxId: null, duplicate: true });
    }
    expect(delivery(undated).eventAt).toBeNull();
    const keys = [...dated, undated].map(identityKey);
    expect(await store.write((tx) => tx.known([...keys, { identity: 'f'.repeat(64), eventAt: keys[0]!.eventAt }]))).toEqual(
      new Set(keys.map((k) => k.identity)),
    );
    expect(await stored(store)).toBe(3);
  });
});
