// The dispatcher's projection loop alone (no handler pump, no timers), on a real in-memory SQLite store.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHandlerRegistry } from '../../src/dispatch/handlers.js';
import { createProjectionLoop, type ProjectionLoopContext } from '../../src/dispatch/projection-loop.js';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, freshStore, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';

const quiet = { warn: () => {} };

// Each store's connection, given by the test so that it can read the tables beside the store.
const connections = new WeakMap<Store, Database.Database>();
const candidateIds = (s: Store) => sqlOn(connections.get(s)!).query('SELECT candidate_id FROM candidates ORDER BY candidate_id');

async function store(bodies: unknown[]): Promise<Store> {
  const db = new Database(':memory:');
  const opened = await openStore(db);
  connections.set(opened, db);
  await opened.write(async (tx) => {
    const raws = bodies.map((body) => Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
    await tx.append(raws.map((raw) => deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), '2026-11-22T00:00:00.000Z', null)));
  });
  return opened;
}

const added = (candidate: string) => sampleEvent('candidate.added', { data: { candidate_id: candidate } });

/** The loop's accounts, as the store under test gives them, with `s` (wrapped, faulty) as the default account's. */
function defaultAccountOf(s: Store): ProjectionLoopContext['store'] {
  return { forAccount: (account) => (account === s.account ? s : s.forAccount(account)), accountsWithWork: () => s.accountsWithWork() };
}

describe('the projection loop', () => {
  let opened: Store | undefined;
  let stopping: AbortController;
  beforeEach(() => {
    stopping = new AbortController();
  });
  afterEach(async () => {
    stopping.abort();
    await opened?.close();
    if (opened !== undefined) connections.get(opened)?.close();
    opened = undefined;
  });

  function loop(s: Store, more: Partial<ProjectionLoopContext> = {}, batchSize = 2) {
    const seen = { handlersDue: 0, processed: [] as string[] };
    const context: ProjectionLoopContext = {
      store: defaultAccountOf(s),
      handlers: createHandlerRegistry(),
      logger: quiet,
      now: () => Date.parse('2026-11-22T01:00:00.000Z'),
      stopping: stopping.signal,
      handlersDue: () => seen.handlersDue++,
      observer: { processed: (row, state) => seen.processed.push(`${row.inbox_id}:${state}`) },
      ...more,
    };
    return { loop: createProjectionLoop(context, { batchSize }), seen };
  }

  it('projects every pending row in batches, settles each with its state, and asks for handlers only when one is due', async () => {
    const unknown = { event: 'candidate.teleported', timestamp: '2026-11-20T10:00:00Z', data: {} };
    const invalid = sampleEvent('candidate.interview.completed', { data: { interview_score: 'ten' } });
    opened = await store([unknown, invalid, added('c-1'), added('c-2'), added('c-3')]);
    const handlers = createHandlerRegistry();
    handlers.on('candidate.added', () => undefined);
    const { loop: projection, seen } = loop(opened, { handlers });
    projection.notify();
    projection.notify(); // coalesced with the first
    await projection.onIdle();
    expect(seen.processed).toEqual(['1:unknown', '2:dead', '3:projected', '4:projected', '5:projected']);
    expect(seen.handlersDue).toBe(2); // after the batches [3, 4] and [5], not after [1, 2]
    const rows = await Promise.all([1, 2, 3, 4, 5].map((id) => opened!.inboxRow(id)));
    expect(rows.map((r) => [r?.state, r?.handlers_pending, r?.processed_at])).toEqual([
      ['unknown', false, '2026-11-22T01:00:00.000Z'],
      ['dead', false, '2026-11-22T01:00:00.000Z'],
      ['projected', true, '2026-11-22T01:00:00.000Z'],
      ['projected', true, '2026-11-22T01:00:00.000Z'],
      ['projected', true, '2026-11-22T01:00:00.000Z'],
    ]);
    expect(JSON.parse(rows[1]!.reasons!)).toContainEqual(expect.objectContaining({ path: 'data.interview_score' }));
    expect(await candidateIds(opened)).toEqual([{ candidate_id: 'c-1' }, { candidate_id: 'c-2' }, { candidate_id: 'c-3' }]);
  });

  it('sets aside alone the event whose projection fails, and projects the rest of its batch', async () => {
    opened = await store([added('c-1'), added('c-poison'), added('c-3')]);
    const real = opened;
    // A fault of one event, not of the store: reading its rows throws.
    const faulty: Store = Object.create(real, {
      write: {
        value: (work: Parameters<Store['write']>[0], options?: Parameters<Store['write']>[1]) =>
          real.write(
            (tx) =>
              work(
                Object.create(tx, {
                  lockRows: {
                    value: (keys: Parameters<typeof tx.lockRows>[0]) =>
                      keys.candidates.includes('c-poison') ? Promise.reject(new Error('no room for c-poison')) : tx.lockRows(keys),
                  },
                }),
              ),
            options,
          ),
      },
    });
    const { loop: projection, seen } = loop(faulty, {}, 3);
    projection.notify();
    await projection.onIdle();
    expect(seen.processed).toEqual(['1:projected', '2:dead', '3:projected']);
    expect(JSON.parse((await real.inboxRow(2))!.reasons!)).toEqual([{ path: '', message: 'projection failed: no room for c-poison' }]);
    expect(await candidateIds(real)).toEqual([{ candidate_id: 'c-1' }, { candidate_id: 'c-3' }]);
  });

  it('defers to an intake that is never idle for 50 ms at most, then takes what arrived meanwhile: 8 batches in one', async () => {
    opened = await store(Array.from({ length: 20 }, (_, i) => added(`c-${i}`)));
    const real = opened;
    const claims: number[] = [];
    const counting: Store = Object.create(real, {
      write: {
        value: (work: Parameters<Store['write']>[0], options?: Parameters<Store['write']>[1]) =>
          real.write(
            (tx) => work(Object.create(tx, { claimPending: { value: (limit: number) => (claims.push(limit), tx.claimPending(limit)) } })),
            options,
          ),
      },
    });
    // Requests always waiting to be stored, as under sustained load.
    const { loop: projection, seen } = loop(counting, { intakeBusy: () => true }, 2);
    const started = performance.now();
    projection.notify();
    await projection.onIdle();
    expect(seen.processed).toHaveLength(20);
    // 16 rows in the first batch (2 × 8), the 4 left in the next, each after its wait.
    expect(claims.slice(0, 2)).toEqual([16, 16]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('starts nothing once stopped: the rows stay pending for the next start', async () => {
    opened = await store([added('c-1')]);
    const { loop: projection, seen } = loop(opened);
    stopping.abort();
    projection.notify();
    await projection.onIdle();
    expect(seen.processed).toEqual([]);
    expect((await opened.inboxRow(1))?.state).toBe('pending');
  });
});

type Write = Store['write'];

/**
 * A store whose projection of c-poison throws (a fault of the event, not of the store), and that
 * runs `between` once, right after the transaction in which c-poison failed alone rolled back:
 * what another process may do before the loop sets the event aside.
 */
function poisoned(real: Store, between: () => Promise<void>): Store {
  let ran = false;
  const write = async <T>(work: Parameters<Write>[0], options?: Parameters<Write>[1]): Promise<T> => {
    let claimed = 0;
    try {
      return (await real.write(
        (tx) =>
          work(
            Object.create(tx, {
              claimPending: {
                value: async (limit: number) => {
                  const rows = await tx.claimPending(limit);
                  claimed = rows.length;
                  return rows;
                },
              },
              lockRows: {
                value: (keys: Parameters<typeof tx.lockRows>[0]) =>
                  keys.candidates.includes('c-poison') ? Promise.reject(new Error('no room for c-poison')) : tx.lockRows(keys),
              },
            }),
          ),
        options,
      )) as T;
    } catch (error) {
      if (claimed === 1 && !ran) {
        ran = true;
        await between();
      }
      throw error;
    }
  };
  return Object.create(real, { write: { value: write } });
}

describe.each(ENGINES)('setting aside the event that fails alone, on $name', (engine: EngineUnderTest) => {
  const quietContext = (s: Store, stopping: AbortSignal): ProjectionLoopContext => ({
    store: defaultAccountOf(s),
    handlers: createHandlerRegistry(),
    logger: quiet,
    now: () => Date.parse('2026-11-22T01:00:00.000Z'),
    stopping,
    handlersDue: () => undefined,
  });

  async function append(s: Store, bodies: unknown[]): Promise<void> {
    const raws = bodies.map((body) => Buffer.from(JSON.stringify(body)));
    await s.append(raws.map((raw) => deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), '2026-11-22T00:00:00.000Z', null)));
  }

  async function states(s: Store, database: string): Promise<Array<[string, string | null]>> {
    const rows = await sqlOn(database).query<{ inbox_id: number }>('SELECT inbox_id FROM inbox ORDER BY inbox_id');
    const read = await Promise.all(rows.map((r) => s.inboxRow(r.inbox_id)));
    return read.map((r) => [r!.state, r!.reasons === null ? null : (JSON.parse(r!.reasons) as Array<{ message: string }>)[0]!.message]);
  }

  it('sets aside that very row, not an older one put back to pending meanwhile', async () => {
    const { store: real, database, close } = await freshStore(engine);
    const stopping = new AbortController();
    try {
      // Row 1 was set aside earlier; an operator puts it back to pending (from another process)
      // just after c-poison failed alone, so that it is the oldest pending row when the loop sets c-poison aside.
      await append(real, [added('c-0')]);
      await real.write(async (tx) => {
        const [row] = await tx.claimPending(1);
        await tx.settle(
          [{ inboxId: row!.inbox_id, state: 'dead', reasons: [{ path: '', message: 'a fault since fixed' }], handlers: false }],
          '2026-11-22T00:30:00.000Z',
        );
      });
      await append(real, [added('c-1'), added('c-poison'), added('c-3')]);
      const store = poisoned(real, async () => void (await real.requeue([1])));
      const projection = createProjectionLoop(quietContext(store, stopping.signal), { batchSize: 3 });
      projection.notify();
      await projection.onIdle();
      expect(await states(real, database)).toEqual([
        ['projected', null],
        ['projected', null],
        ['dead', 'projection failed: no room for c-poison'],
        ['projected', null],
      ]);
    } finally {
      stopping.abort();
      await close();
    }
  });

  // PostgreSQL only: replicas project concurrently there (SQLite has one writer). Not defined on
  // SQLite rather than skipped, so that a skip in a CI run always means something went untested.
  if (engine.name === 'postgres') {
    it('leaves to a replica the failing row it holds, and sets aside no other row in its place', async () => {
      const { store: real, database, close } = await freshStore(engine);
      const replica = await openStore(database);
      const stopping = new AbortController();
      let release: (() => void) | undefined;
      let held: Promise<unknown> | undefined;
      try {
        await append(real, [added('c-1'), added('c-poison'), added('c-3')]);
        // Just after c-poison failed alone, a replica claims it (the oldest pending row) and holds it
        // while the loop sets it aside; then it gives it back (its own transaction rolls back).
        const store = poisoned(real, async () => {
          const claimed = new Promise<void>((resolve, reject) => {
            held = replica
              .write(async (tx) => {
                expect((await tx.claimPending(1)).map((r) => r.inbox_id)).toEqual([2]);
                resolve();
                await new Promise<void>((r) => (release = r));
                throw new Error('the replica gives the row back');
              })
              .catch((error: Error) => (error.message === 'the replica gives the row back' ? undefined : reject(error)));
          });
          await claimed;
        });
        let released = false;
        const releasing: Store = Object.create(store, {
          write: {
            value: async <T>(work: Parameters<Write>[0], options?: Parameters<Write>[1]): Promise<T> => {
              const afterFailure = release !== undefined;
              try {
                return (await store.write(work, options)) as T;
              } finally {
                // The replica lets go once the loop's next transaction (setting the event aside) ended.
                if (afterFailure && !released) {
                  released = true;
                  release!();
                  await held;
                }
              }
            },
          },
        });
        const projection = createProjectionLoop(quietContext(releasing, stopping.signal), { batchSize: 3 });
        projection.notify();
        await projection.onIdle();
        expect(await states(real, database)).toEqual([
          ['projected', null],
          ['dead', 'projection failed: no room for c-poison'],
          ['projected', null],
        ]);
      } finally {
        stopping.abort();
        release?.();
        await held;
        await replica.close();
        await close();
      }
    });
  }
});
