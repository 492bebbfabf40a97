// A cursor never skips a change on PostgreSQL with several replicas writing (docs/changes.md,
// docs/projection.md section 10): two stores on one database (two replicas, each its own pool)
// store and project deliveries at once, both projecting the same inbox, while readers on a third
// follow the feed by cursor, one as fast as it can, one through followChanges. Each reader sees
// every change exactly once, in seq order, with nothing left out below what it has seen.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/events/index.js';
import { followChanges, readChanges } from '../../src/query/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { projectPending } from '../support/project.js';
import { waitFor } from '../support/wait-for.js';

const AT = '2026-11-27T00:00:00.000Z';

/** A few deliveries at a time, each followed by a projection: many small transactions, interleaved with the other replica's. */
async function write(store: Store, writer: string, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const bodies = [0, 1, 2].flatMap((i) => {
      const data = { campaign_id: `cmp_${i % 2}`, candidate_id: `${writer}-${round}-${i}` };
      const added = sampleEvent('candidate.added', { data });
      return i === 2 ? [added, sampleEvent('candidate.interview.completed', { data: { ...data, interview_score: round % 10 } })] : [added];
    });
    const raws = bodies.map((body) => Buffer.from(JSON.stringify(body)));
    await store.append(raws.map((raw) => deliveryOf(store.account, raw, readEnvelope(raw), AT, null)));
    await projectPending(store, { batchSize: 2 });
  }
}

/** Reads by cursor as fast as it can until `done` and it has reached the last change; the seqs seen, in order. */
async function chase(store: Store, done: () => boolean): Promise<number[]> {
  const seen: number[] = [];
  let after = 0;
  for (;;) {
    const page = await readChanges(store, { after, limit: 7 });
    seen.push(...page.changes.map((change) => change.seq));
    after = page.next;
    if (page.changes.length === 0 && done()) {
      const last = (await store.changesAfter(after, 1)).last;
      if (after === last) return seen;
    }
  }
}

describe.skipIf(postgresUrl() === '')('the change feed on PostgreSQL with two replicas writing', () => {
  const stores: Store[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  it('gives every reader every change exactly once, in seq order', async () => {
    const url = await createDatabase(postgresUrl(), `t_${randomBytes(6).toString('hex')}`);
    const [first, second, reader] = await Promise.all([
      openStore(url, { poolSize: 4 }),
      openStore(url, { poolSize: 4 }),
      openStore(url, { poolSize: 4 }),
    ]);
    stores.push(first, second, reader);

    let writing = true;
    const following = new AbortController();
    const followed: number[] = [];
    const follower = (async () => {
      for await (const change of followChanges(reader, { signal: following.signal })) followed.push(change.seq);
    })();
    const chased = chase(reader, () => !writing);
    await Promise.all([write(first, 'a', 25), write(second, 'b', 25)]);
    writing = false;

    const last = (await reader.changesAfter(0, 1)).last;
    // Three candidates a round and replica at least (an interview projected in the batch of its candidate's addition is one change with it).
    expect(last).toBeGreaterThanOrEqual(2 * 25 * 3);
    const everySeq = Array.from({ length: last }, (_, i) => i + 1);
    expect(await chased).toEqual(everySeq);
    await waitFor(() => followed.length >= last, 5000, `the follower reaching seq ${last}`);
    following.abort();
    await follower;
    expect(followed).toEqual(everySeq);
  });
});
