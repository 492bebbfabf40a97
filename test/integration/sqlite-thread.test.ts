// The SQLite store with its connection in a worker thread: a worker that dies mid-transaction
// fails what it had in hand as StoreUnavailableError (so the sender gets a 503 and retries), its
// transaction is not committed, and the next write starts a new worker.
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { WORKER } from '../../src/store/sqlite/threaded.js';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { tempDir } from '../support/servers.js';

describe('SQLite in a worker thread', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('a worker that dies mid-transaction fails it as unavailable, commits nothing, and is started again', async () => {
    const tmp = tempDir();
    const store: Store = await openStore(tmp.dbPath, { thread: true });
    cleanups.push(tmp.cleanup, () => store.close());
    await store.write((tx) => tx.putSetting('before', '1'));
    const worker = (store as unknown as Record<symbol, () => Worker | undefined>)[WORKER]!();
    expect(worker).toBeInstanceOf(Worker);

    const dying = store.write(async (tx) => {
      await tx.putSetting('lost', '1');
      await worker!.terminate();
      await tx.putSetting('lost-too', '1');
    });
    await expect(dying).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(dying).rejects.toMatchObject({ code: 'STORE_WORKER_EXITED' });

    await store.write((tx) => tx.putSetting('after', '1'));
    expect((store as unknown as Record<symbol, () => Worker | undefined>)[WORKER]!()).not.toBe(worker);
    expect(await store.setting('before')).toMatchObject({ value: '1' });
    expect(await store.setting('after')).toMatchObject({ value: '1' });
    expect(await store.setting('lost')).toBeUndefined();
  });

  it('reads and writes the same database as the main-thread store, Buffers kept', async () => {
    const tmp = tempDir();
    const store = await openStore(tmp.dbPath, { thread: true });
    cleanups.push(tmp.cleanup);
    const raw = Buffer.from('{"event":"x.y","timestamp":"2026-11-20T10:00:00Z","data":{}}');
    const [appended] = await store.write((tx) =>
      tx.append([{ raw, receivedAt: '2026-11-20T10:00:00.000Z', identity: 'f'.repeat(64), eventAt: Date.parse('2026-11-20T10:00:00Z'), kind: 'x.y', verdict: 'accepted', secretId: null, reasons: null }]),
    );
    await store.close();
    const plain = await openStore(tmp.dbPath);
    cleanups.push(() => plain.close());
    const row = await plain.inboxRow(appended!.inboxId!);
    expect(Buffer.isBuffer(row!.raw) && row!.raw.equals(raw)).toBe(true);
  });
});
