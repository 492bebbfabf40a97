// The dispatcher's projection loop alone (no handler pump, no timers), on a real in-memory SQLite store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHandlerRegistry } from '../../src/dispatch/handlers.js';
import { createProjectionLoop, type ProjectionLoopParts } from '../../src/dispatch/projection-loop.js';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';

const quiet = { warn: () => {} };

async function store(bodies: unknown[]): Promise<Store> {
  const opened = await openStore(':memory:');
  await opened.write(async (tx) => {
    const raws = bodies.map((body) => Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
    await tx.append(raws.map((raw) => deliveryOf(raw, readEnvelope(raw), '2026-11-22T00:00:00.000Z', null)));
  });
  return opened;
}

const added = (candidate: string) => sampleEvent('candidate.added', { data: { candidate_id: candidate } });

describe('the projection loop', () => {
  let opened: Store | undefined;
  let stopping: AbortController;
  beforeEach(() => {
    stopping = new AbortController();
  });
  afterEach(async () => {
    stopping.abort();
    await opened?.close();
    opened = undefined;
  });

  function loop(s: Store, more: Partial<ProjectionLoopParts> = {}, batchSize = 2) {
    const seen = { handlersDue: 0, processed: [] as string[] };
    const parts: ProjectionLoopParts = {
      store: s,
      handlers: createHandlerRegistry(),
      logger: quiet,
      now: () => Date.parse('2026-11-22T01:00:00.000Z'),
      stopping: stopping.signal,
      handlersDue: () => seen.handlersDue++,
      observer: { processed: (row, state) => seen.processed.push(`${row.inbox_id}:${state}`) },
      ...more,
    };
    return { loop: createProjectionLoop(parts, { batchSize }), seen };
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
    expect(await opened.select('SELECT candidate_id FROM candidates ORDER BY candidate_id')).toEqual([
      { candidate_id: 'c-1' },
      { candidate_id: 'c-2' },
      { candidate_id: 'c-3' },
    ]);
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
    expect(await real.select('SELECT candidate_id FROM candidates ORDER BY candidate_id')).toEqual([{ candidate_id: 'c-1' }, { candidate_id: 'c-3' }]);
  });

  it('defers to an intake that is never idle for 50 ms at most, then takes what arrived meanwhile: 8 batches in one', async () => {
    opened = await store(Array.from({ length: 20 }, (_, i) => added(`c-${i}`)));
    const real = opened;
    const claims: number[] = [];
    const counting: Store = Object.create(real, {
      write: {
        value: (work: Parameters<Store['write']>[0], options?: Parameters<Store['write']>[1]) =>
          real.write((tx) => work(Object.create(tx, { claimPending: { value: (limit: number) => (claims.push(limit), tx.claimPending(limit)) } })), options),
      },
    });
    // A commit always in flight, as with SQLite in a worker thread under load.
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
