// The PostgreSQL engine's operation families, each alone against a real database: no Store object,
// no dispatcher, only the functions and the SQL they run.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf, type Delivery } from '../../src/receive/delivery.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { claimHandlers, claimPending, releaseHandlers, settle } from '../../src/store/postgres/claims.js';
import { createPool, typeParsers } from '../../src/store/postgres/connection.js';
import { handlersDone } from '../../src/store/postgres/handlers.js';
import { appendDeliveries } from '../../src/store/postgres/intake.js';
import { prepareSchema } from '../../src/store/postgres/readiness.js';
import { createEngine, inTransaction, type Engine } from '../../src/store/postgres/session.js';
import { announceWork, createWorkChannel, onWork, stopListening } from '../../src/store/postgres/work-channel.js';
import { sampleEvent } from '../../src/testing/index.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { waitFor } from '../support/wait-for.js';

const delivery = (kind: 'candidate.added' | 'candidate.interview.started', candidate: string): Delivery => {
  const raw = Buffer.from(JSON.stringify(sampleEvent(kind, { data: { candidate_id: candidate } })));
  return deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), '2026-11-20T10:00:00.000Z', 'fp');
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An engine on a new migrated database (`url` to open a second one on it). */
async function freshEngine(url?: string): Promise<{ engine: Engine; url: string }> {
  url ??= await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
  const pool = await createPool(url);
  const engine = createEngine(pool, await typeParsers());
  closers.push(async () => {
    engine.closed = true;
    await pool.end();
  });
  await prepareSchema(engine, { location: 'test' });
  return { engine, url };
}

async function append(engine: Engine, deliveries: Delivery[]): Promise<number[]> {
  const appended = await inTransaction(engine, (tx) => appendDeliveries(tx, deliveries));
  return appended.map((a) => a.inboxId!);
}

describe.skipIf(postgresUrl() === '')('PostgreSQL operations, alone', () => {
  it('claims: a pending row claimed in one transaction is skipped by another, and pending again when the first rolls back', async () => {
    const { engine } = await freshEngine();
    const ids = await append(engine, [
      delivery('candidate.added', 'c1'),
      delivery('candidate.added', 'c2'),
      delivery('candidate.added', 'c3'),
    ]);
    let first: number[] = [];
    let second: number[] = [];
    const rolledBack = inTransaction(engine, async (a) => {
      first = (await claimPending(a, DEFAULT_ACCOUNT, 2)).map((r) => r.inbox_id);
      second = (await inTransaction(engine, (b) => claimPending(b, DEFAULT_ACCOUNT, 10))).map((r) => r.inbox_id);
      throw new Error('the projection failed');
    });
    await expect(rolledBack).rejects.toThrow('the projection failed');
    expect(first).toEqual(ids.slice(0, 2));
    expect(second).toEqual(ids.slice(2));
    const again = await inTransaction(engine, (tx) => claimPending(tx, DEFAULT_ACCOUNT, 10));
    expect(again.map((r) => [r.inbox_id, r.state])).toEqual(ids.map((id) => [id, 'pending']));
  });

  it("leases: a handler lease keeps a row from other owners until given back, and a key's later row waits for its earlier one", async () => {
    const { engine } = await freshEngine();
    const db = engine.pooled;
    const [c1, c2, c1Later] = await append(engine, [
      delivery('candidate.added', 'c1'),
      delivery('candidate.added', 'c2'),
      delivery('candidate.interview.started', 'c1'),
    ]);
    await inTransaction(engine, (tx) =>
      settle(
        tx,
        [c1!, c2!, c1Later!].map((inboxId) => ({ inboxId, state: 'projected' as const, reasons: null, handlers: true })),
        '2026-11-20T10:00:01.000Z',
      ),
    );
    const claim = async (owner: string) =>
      (await claimHandlers(db, DEFAULT_ACCOUNT, { owner, limit: 10, leaseMs: 60_000, running: new Set() })).map((r) => r.inbox_id);

    expect(await claim('a')).toEqual([c1, c2]);
    expect(await claim('b')).toEqual([]);
    await releaseHandlers(db, 'a', [c1!]);
    expect(await claim('b')).toEqual([c1]);
    await handlersDone(db, c1!);
    expect(await claim('c')).toEqual([c1Later]);
  });

  it('work channel: announcements made while one is on its way reach another process as one more, not one each', async () => {
    const { engine: announcer, url } = await freshEngine();
    const { engine: listener } = await freshEngine(url);
    const listening = createWorkChannel(listener);
    closers.unshift(async () => stopListening(listening));
    let wakes = 0;
    onWork(listening, () => wakes++);
    // Listening: it wakes once for what it may have missed.
    await waitFor(() => wakes >= 1, 5000, 'the first wake');
    expect(wakes).toBe(1);

    const announcing = createWorkChannel(announcer);
    for (let i = 0; i < 5; i++) announceWork(announcing);
    await waitFor(() => wakes >= 3, 5000, 'two wakes for the five announcements');
    expect(wakes).toBe(3);
    // No more come: a last announcement, made once the five are sent, is delivered after anything
    // they sent (a listener gets notifications in commit order), and it is the only wake left.
    await waitFor(() => !announcing.announcing, 5000, 'the announcements to be sent');
    announceWork(createWorkChannel(announcer));
    await waitFor(() => wakes >= 4, 5000, 'the last announcement');
    expect(wakes).toBe(4);
  });
});
