// On PostgreSQL the operator's long reads share the pool with the intake
// (src/store/postgres/operator-reads.ts): however many are asked for at once, and however long
// they take, a delivery still finds a connection and commits at once.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { withDeadline } from '../../src/deadline.js';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const AT = '2026-11-22T00:00:00.000Z';
const delivery = (store: Store, candidate: string) => {
  const raw = Buffer.from(JSON.stringify(sampleEvent('candidate.added', { data: { candidate_id: candidate } })));
  return deliveryOf(store.account, raw, readEnvelope(raw), AT, null);
};

describe.skipIf(postgresUrl() === '')('operator reads on PostgreSQL', () => {
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('twenty long reads at once, held up by a lock, leave the intake a connection: a delivery commits while they wait', async () => {
    const url = await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
    const store = await openStore(url, { poolSize: 5 });
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    closers.push(
      () => store.close(),
      () => locker.end(),
    );
    await store.append([delivery(store, 'before')]);

    // Every read of the candidates waits for this lock (what a read over millions of rows is like): until it is released,
    // each read that has started holds its connection.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE candidates IN ACCESS EXCLUSIVE MODE');
    const reads = Array.from({ length: 20 }, () =>
      store.readModel.listCandidates({ campaignId: 'cmp_9fWc2GzK7p', sort: 'date_desc', limit: 10, offset: 0 }).then(
        (page) => page.total,
        (error: unknown) => error,
      ),
    );
    // The gate's first read is under way: its backend waits on the lock.
    const waitingOnLock = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
    await waitFor(async () => (await sqlOn(url).query(waitingOnLock)).length > 0, 10_000, 'a read to wait on the lock');
    const started = performance.now();
    const appended = await withDeadline(store.append([delivery(store, 'during')]), 2000);
    const ms = performance.now() - started;
    await locker.query('COMMIT');

    expect(appended, `the delivery waited ${Math.round(ms)} ms for a connection`).toEqual([
      { inboxId: expect.any(Number), duplicate: false },
    ]);
    // The reads waited their turn, and each answered once the lock was gone.
    expect(await Promise.all(reads)).toEqual(Array.from({ length: 20 }, () => 0));
    expect((await store.counts()).pending).toBe(2);
  });
});
