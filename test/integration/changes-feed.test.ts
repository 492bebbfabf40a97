// The change feed as a library user reads it (docs/changes.md): `receiver.forAccount(id).changes()`
// follows an account's changes by cursor, live until the iterator is returned or `follow: false`
// stops it at the end; `changesPage` and `readChanges` give pages; a cursor that retention passed
// throws ChangesDroppedError naming the oldest kept, and a cursor past the last change (a database
// restored from an older backup) CursorAheadError naming the last. On both engines.
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createKeyFile, newKey } from '../../src/accounts/key-file.js';
import { ChangesDroppedError, CursorAheadError, followChanges, readChanges, type Change } from '../../src/index.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES } from '../support/engines.js';
import { tempDir } from '../support/servers.js';

const candidate = (id: string, campaign = 'cmp_lib') =>
  sampleEvent('candidate.added', { data: { campaign_id: campaign, candidate_id: id } });

describe.each(ENGINES)('the change feed of a receiver on $name', (engine) => {
  const closing: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function fresh() {
    const { database, cleanup } = await engine.fresh();
    const keys = tempDir('prequal-hooks-keys-');
    const keyFile = join(keys.dir, 'accounts-key');
    createKeyFile(keyFile, newKey());
    closing.push(cleanup, keys.cleanup);
    const receiver = createReceiver({ database, secret: 'whsec_changes-feed-test-5a1b', accounts: { keyFile, everyMs: 50 } });
    closing.push(() => receiver.close());
    await receiver.ready();
    return receiver;
  }

  it("follows one account's changes after a cursor, live, until the loop breaks; follow: false ends at the last", async () => {
    const receiver = await fresh();
    await (await receiver.accounts())!.add({ account: 'acme', secret: 'whsec_changes-feed-test-acme-77c2' });
    const acme = receiver.forAccount('acme');
    await acme.replay([candidate('cand-1'), candidate('cand-2')]);
    await receiver.replay([candidate('cand-default')]);

    const recorded: Change[] = [];
    for await (const change of acme.changes({ follow: false })) recorded.push(change);
    // The campaign is made by its first candidate's event.
    expect(recorded.map((c) => [c.seq, c.entity, c.id, c.op])).toEqual([
      [1, 'campaign', 'cmp_lib', 'upsert'],
      [2, 'candidate', 'cand-1', 'upsert'],
      [3, 'candidate', 'cand-2', 'upsert'],
    ]);
    expect(recorded[1]!.row).toMatchObject({ candidate_id: 'cand-1', campaign_id: 'cmp_lib' });
    expect(recorded[1]!.events).toHaveLength(1);

    const live: Change[] = [];
    const following = (async () => {
      for await (const change of acme.changes({ after: 2 })) {
        live.push(change);
        if (change.seq === 4) break;
      }
    })();
    await acme.replay([candidate('cand-3')]);
    await following;
    expect(live.map((c) => [c.seq, c.id])).toEqual([
      [3, 'cand-2'],
      [4, 'cand-3'],
    ]);
    expect(await receiver.changesPage({ limit: 10 })).toMatchObject({ changes: [{ seq: 1 }, { seq: 2, id: 'cand-default' }], next: 2 });
  });

  it('a follower ends, without an error, when the receiver closes', async () => {
    const receiver = await fresh();
    await receiver.replay([candidate('cand-1')]);
    const following = (async () => {
      for await (const _change of receiver.changes());
      return 'ended';
    })();
    await receiver.replay([candidate('cand-2')]);
    await receiver.close();
    expect(await following).toBe('ended');
  });

  it('pages with next; a cursor retention passed throws ChangesDroppedError with the oldest kept; bad parameters reject', async () => {
    const receiver = await fresh();
    await receiver.replay([candidate('cand-1'), candidate('cand-2'), candidate('cand-3')]);
    const store = await receiver.store();
    expect(await readChanges(store, { after: 1, limit: 1 })).toMatchObject({ changes: [{ seq: 2 }], next: 2 });
    expect(await readChanges(store, { after: 4 })).toEqual({ changes: [], next: 4 });

    expect(await storePorts(store).pruneChanges('2999-01-01T00:00:00.000Z', 2)).toBe(2);
    await receiver.replay([candidate('cand-4')]);
    const dropped = await receiver.changesPage({ after: 1 }).catch((error: unknown) => error);
    expect(dropped).toBeInstanceOf(ChangesDroppedError);
    expect(dropped).toMatchObject({ after: 1, oldest: 3 });
    // At the last dropped, or absent: nothing was skipped.
    expect((await receiver.changesPage({ after: 2 })).changes.map((c) => c.seq)).toEqual([3, 4, 5]);
    expect((await receiver.changesPage()).changes.map((c) => c.seq)).toEqual([3, 4, 5]);
    await expect(receiver.changes({ after: 0, follow: false }).next()).rejects.toBeInstanceOf(ChangesDroppedError);

    for (const parameters of [{ after: -1 }, { after: 1.5 }, { limit: 0 }, { limit: 1001 }])
      await expect(receiver.changesPage(parameters)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('a cursor past the last change (a restored database) throws CursorAheadError with the head, 0 for an account without changes', async () => {
    const receiver = await fresh();
    await (await receiver.accounts())!.add({ account: 'quiet', secret: 'whsec_changes-feed-test-quiet-1c9e' });
    const quiet = receiver.forAccount('quiet');
    expect(await quiet.changesPage({ after: 0 })).toEqual({ changes: [], next: 0 });
    await expect(quiet.changesPage({ after: 1 })).rejects.toMatchObject({
      name: 'CursorAheadError',
      code: 'CURSOR_AHEAD',
      after: 1,
      head: 0,
    });

    await receiver.replay([candidate('cand-1'), candidate('cand-2')]);
    expect(await receiver.changesPage({ after: 3 })).toEqual({ changes: [], next: 3 });
    const ahead = await receiver.changesPage({ after: 4 }).catch((error: unknown) => error);
    expect(ahead).toBeInstanceOf(CursorAheadError);
    expect(ahead).toMatchObject({ after: 4, head: 3 });
    expect((ahead as Error).message).toContain('read the projected state again, then follow from 3');
    await expect(receiver.changes({ after: 4 }).next()).rejects.toBeInstanceOf(CursorAheadError);
    const store = await receiver.store();
    await expect(readChanges(store, { after: 40, limit: 1 })).rejects.toMatchObject({ after: 40, head: 3 });
    await expect(followChanges(store, { after: 40, follow: false }).next()).rejects.toBeInstanceOf(CursorAheadError);
  });

  it('a follower reads pages of about 256 KiB, one change at least, so that it holds a few large rows, not a thousand', async () => {
    const receiver = await fresh();
    const strengths = 'x'.repeat(100_000);
    const large = (i: number) =>
      sampleEvent('candidate.interview.completed', { data: { campaign_id: 'cmp_lib', candidate_id: `cand-large-${i}`, strengths } });
    // One replay a change, so that seqs follow the order here.
    await receiver.replay([candidate('cand-small')]);
    for (let i = 0; i < 8; i += 1) await receiver.replay([large(i)]);
    await receiver.replay([
      sampleEvent('candidate.interview.completed', {
        data: { campaign_id: 'cmp_lib', candidate_id: 'cand-huge', strengths: 'y'.repeat(400_000) },
      }),
    ]);
    const port = storePorts(await receiver.store());
    const head = (await port.changesAfter(0, 1)).last;
    // The campaign and the small candidate (a few hundred bytes), then rows of 100 kB: the page ends at the change that reaches 256 KiB.
    expect((await port.changesAfter(0, 1000, 256 * 1024)).changes.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await port.changesAfter(2, 1000, 256 * 1024)).changes.map((c) => c.seq)).toEqual([3, 4, 5]);
    // A change larger than the page is a page alone; without a size, the page is the number asked.
    expect((await port.changesAfter(head - 1, 1000, 256 * 1024)).changes.map((c) => c.seq)).toEqual([head]);
    expect((await port.changesAfter(0, 1000)).changes).toHaveLength(head);

    const read = vi.spyOn(port, 'changesAfter');
    const followed: number[] = [];
    for await (const change of receiver.changes({ follow: false })) followed.push(change.seq);
    expect(followed).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    const pages = await Promise.all(
      read.mock.results.map(async (result) => (await (result.value as ReturnType<typeof port.changesAfter>)).changes.length),
    );
    expect(Math.max(...pages)).toBeLessThanOrEqual(5);
    expect(read.mock.calls.every(([, , maxBytes]) => maxBytes === 256 * 1024)).toBe(true);
    read.mockRestore();
  });
});
