// The SQLite engine's operation families, each alone on a real (in-memory, migrated) database:
// no Store, no queue, only the family's functions and the statements it prepares.
import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/receive/delivery.js';
import { openConnection, prepareTransactions, read, writeTransaction, type Writer } from '../../src/store/sqlite/connection.js';
import { openDatabase, type SqliteDatabase } from '../../src/store/sqlite/database.js';
import * as handlers from '../../src/store/sqlite/handlers.js';
import * as inbox from '../../src/store/sqlite/inbox.js';
import * as projection from '../../src/store/sqlite/projection.js';
import type { WriteTx } from '../../src/store/write-ports.js';
import { emptyCandidate } from '../../src/tables/rows.js';

const delivery = (n: number, handlerKey: string): Delivery => ({
  account: 'default',
  raw: Buffer.from(`{"n":${n}}`),
  receivedAt: '2026-01-01T00:00:00.000Z',
  identity: `id-${n}`,
  eventAt: null,
  kind: 'candidate.created',
  handlerKey,
  verdict: 'accepted',
  secretId: null,
  reasons: null,
});

/** Rows 1..n appended and projected with their handlers due, in the order of `keys`. */
function projectedWithHandlers(db: SqliteDatabase, keys: readonly string[]): number[] {
  const rows = inbox.prepareInbox(db);
  const writes = projection.prepareProjection(db);
  const ids = keys.map((key, n) => inbox.append(rows, delivery(n, key)).inboxId!);
  projection.settle(
    writes,
    ids.map((inboxId) => ({ inboxId, state: 'projected', reasons: null, handlers: true })),
    '2026-01-01T00:00:01.000Z',
  );
  return ids;
}

describe('handlers family: claims', () => {
  it("gives one row per handler key at a time, in inbox order, and skips live leases and the caller's running rows", () => {
    const db = openDatabase(':memory:');
    const s = handlers.prepareHandlers(db);
    const [a1, a2, b1, c1] = projectedWithHandlers(db, ['a', 'a', 'b', 'c']);
    const claim = { owner: 'one', limit: 10, leaseMs: 60_000, running: new Set<number>() };

    // a2 waits for a1 (same key): its handlers must not run before a1's.
    expect(handlers.claimHandlers(s, 'default', claim).map((r) => r.inbox_id)).toEqual([a1, b1, c1]);
    // Leased: another process gets nothing until the leases end or are released.
    expect(handlers.claimHandlers(s, 'default', { ...claim, owner: 'two' })).toEqual([]);
    handlers.releaseHandlers(s, 'one', [b1!]);
    expect(handlers.claimHandlers(s, 'default', { ...claim, owner: 'two' }).map((r) => r.inbox_id)).toEqual([b1]);
    // Done: the key's next row is due.
    handlers.handlersDone(s, a1!);
    expect(handlers.claimHandlers(s, 'default', { ...claim, owner: 'two' }).map((r) => r.inbox_id)).toEqual([a2]);
    db.close();
  });

  it('fills its limit past the rows the caller already runs, and never goes over it', () => {
    const db = openDatabase(':memory:');
    const s = handlers.prepareHandlers(db);
    const [a, b, c] = projectedWithHandlers(db, ['a', 'b', 'c', 'd']);
    // Leases already over (-1 ms) leave every row claimable at the next call.
    const claim = { owner: 'one', limit: 2, leaseMs: -1 };
    expect(handlers.claimHandlers(s, 'default', { ...claim, running: new Set([a!]) }).map((r) => r.inbox_id)).toEqual([b, c]);
    expect(handlers.claimHandlers(s, 'default', { ...claim, running: new Set([999]) }).map((r) => r.inbox_id)).toEqual([a, b]);
    db.close();
  });
});

describe('inbox family: claims of pending rows', () => {
  it('prepares one statement per limit, once, and takes pending rows oldest first', () => {
    const db = openDatabase(':memory:');
    const s = inbox.prepareInbox(db);
    for (let n = 0; n < 5; n++) inbox.append(s, delivery(n, 'k'));
    expect(inbox.append(s, delivery(3, 'k'))).toEqual({ inboxId: null, duplicate: true });
    const first = inbox.claimPending(s, 'default', 2);
    const statement = s.pendingByLimit.get(2);
    expect(inbox.claimPending(s, 'default', 2).map((r) => r.inbox_id)).toEqual(first.map((r) => r.inbox_id));
    expect(inbox.claimPending(s, 'default', 3).map((r) => r.identity)).toEqual(['id-0', 'id-1', 'id-2']);
    // A bound LIMIT made SQLite re-prepare on every call: the limit is in the SQL, one statement each.
    expect(s.pendingByLimit.get(2)).toBe(statement);
    expect([...s.pendingByLimit.keys()]).toEqual([2, 3]);
    db.close();
  });
});

describe('projection family: versioned rows', () => {
  it('reads a missing key as an absent empty row, inserts it, and reads booleans back as booleans', () => {
    const db = openDatabase(':memory:');
    const s = projection.prepareProjection(db);
    const locked = projection.lockRows(s, 'default', { campaigns: [], candidates: ['c1'], credits: true });
    expect(locked.candidates.get('c1')).toEqual({ row: emptyCandidate('c1'), field_versions: '|', absent: true });
    expect(locked.credits?.absent).toBe(true);
    const row = { ...emptyCandidate('c1'), first_name: 'Ada', is_sourced: true, call_queued: false };
    projection.saveRows(s, 'default', {
      campaigns: [],
      candidates: [{ row, field_versions: '|v1|', absent: true }],
      credits: undefined,
      responses: new Map(),
    });
    expect(db.prepare('SELECT is_sourced, call_queued, sms_sent FROM candidates').get()).toEqual({
      is_sourced: 1,
      call_queued: 0,
      sms_sent: null,
    });
    const again = projection.lockRows(s, 'default', { campaigns: [], candidates: ['c1'], credits: false });
    expect(again.candidates.get('c1')).toEqual({ row, field_versions: '|v1|' });
    expect(again.credits).toBeUndefined();
    db.close();
  });
});

describe('connection: reads and the write transaction', () => {
  it('a read waits for the transaction in progress, and never sees what it rolls back', async () => {
    const db = openDatabase(':memory:');
    const connection = openConnection(db, 1000);
    const s = inbox.prepareInbox(db);
    const writer: Writer = { transactions: prepareTransactions(db), tx: { append: async (d) => inbox.appendAll(s, d) } as WriteTx };
    let abort!: () => void;
    const aborted = new Promise<void>((resolve) => (abort = resolve));
    const writing = writeTransaction(connection, writer, async (tx) => {
      await tx.append([delivery(1, 'k')]);
      await aborted;
      throw new Error('rolled back');
    });
    // Let the transaction begin and insert its row.
    await new Promise((resolve) => setImmediate(resolve));
    let seen: number | undefined;
    const reading = read(connection, () => (seen = db.prepare('SELECT COUNT(*) FROM inbox').pluck().get() as number));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toBeUndefined();
    abort();
    await expect(writing).rejects.toThrow('rolled back');
    expect(await reading).toBe(0);
    db.close();
  });
});
