// The dispatcher's handler pump alone (no projection loop: rows are made due by hand), on a real
// in-memory SQLite store that two pumps share as two processes would share a database.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandlerPump, type HandlerPumpSettings } from '../../src/dispatch/handler-pump.js';
import { createHandlerRegistry, type HandlerRegistry } from '../../src/dispatch/handlers.js';
import { readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { waitFor } from '../support/wait-for.js';

const quiet = { warn: () => {}, error: () => {} };
const SETTINGS: HandlerPumpSettings = {
  handlerWindow: 16,
  handlerConcurrency: 4,
  handlerAttempts: 3,
  handlerRetryDelayMs: 5,
  handlerTimeoutMs: 10_000,
  handlerLeaseMs: 600,
};

/** A store whose rows are projected with their handlers due (what the projection loop leaves). */
async function storeWithDue(events: unknown[]): Promise<Store> {
  const store = await openStore(':memory:');
  await store.write(async (tx) => {
    const raws = events.map((event) => Buffer.from(JSON.stringify(event)));
    await tx.append(raws.map((raw) => deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), '2026-11-22T00:00:00.000Z', null)));
    const claimed = await tx.claimPending(events.length);
    await tx.settle(
      claimed.map((row) => ({ inboxId: row.inbox_id, state: 'projected', reasons: null, handlers: true })),
      '2026-11-22T00:00:01.000Z',
    );
  });
  return store;
}

const event = (kind: 'candidate.added' | 'candidate.interview.started', candidate: string) =>
  sampleEvent(kind, { data: { candidate_id: candidate } });

describe('the handler pump', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function pump(store: Store, handlers: HandlerRegistry, owner: string, settings = SETTINGS) {
    const stopping = new AbortController();
    const pumpOf = createHandlerPump({ store, handlers, logger: quiet, now: Date.now, owner, stopping: stopping.signal }, settings);
    cleanups.push(() => {
      stopping.abort();
      pumpOf.stop();
    });
    return { pump: pumpOf, stopping };
  }

  it("runs each key's handlers in inbox order, retries a failing one, and records it as a dead letter once out of attempts", async () => {
    const store = await storeWithDue([
      event('candidate.added', 'a'),
      event('candidate.added', 'b'),
      event('candidate.interview.started', 'a'),
    ]);
    cleanups.push(() => store.close());
    const calls: string[] = [];
    const handlers = createHandlerRegistry();
    handlers.onAny(async (e, context) => {
      // eslint-disable-next-line no-restricted-syntax -- a's handler is the slower one: b's runs meanwhile, which is the scenario
      await new Promise((resolve) => setTimeout(resolve, (e.data as { candidate_id: string }).candidate_id === 'a' ? 20 : 0));
      calls.push(`${(e.data as { candidate_id: string }).candidate_id}:${e.event}:${context.attempt}`);
    });
    handlers.on(
      'candidate.interview.started',
      () => {
        throw new Error('the CRM said no');
      },
      { name: 'crm' },
    );
    const { pump: handlerPump } = pump(store, handlers, 'process-1');
    handlerPump.pump();
    await handlerPump.whenIdle();
    expect(calls.filter((c) => c.startsWith('a:'))).toEqual(['a:candidate.added:1', 'a:candidate.interview.started:1']);
    expect(calls).toContain('b:candidate.added:1');
    expect(await store.handlerFailures(0, 10)).toEqual([
      expect.objectContaining({ inbox_id: 3, handler: 'crm', attempts: 3, error: 'Error: the CRM said no' }),
    ]);
    expect((await store.counts()).handler_failures).toBe(1);
    for (const id of [1, 2, 3]) expect((await store.inboxRow(id))?.handlers_pending).toBe(false);
  });

  it('leaves a claim another process renews alone, and takes it once its lease ends', async () => {
    // The leases' clock and the renewals' interval are fake: the test moves them on by hand.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    cleanups.push(() => vi.useRealTimers());
    const store = await storeWithDue([event('candidate.added', 'a'), event('candidate.added', 'b')]);
    cleanups.push(() => store.close());
    const started: string[] = [];
    const hanging = createHandlerRegistry();
    hanging.onAny((e, { signal }) => {
      started.push(`1:${(e.data as { candidate_id: string }).candidate_id}`);
      return new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const first = pump(store, hanging, 'process-1');
    first.pump.pump();
    await waitFor(() => started.length === 2, 5000, 'both handlers of the first process to start');

    const second = createHandlerRegistry();
    second.onAny((e) => void started.push(`2:${(e.data as { candidate_id: string }).candidate_id}`));
    const { pump: other } = pump(store, second, 'process-2');
    // Three leases long: the first process renews its claims all along.
    await vi.advanceTimersByTimeAsync(3 * SETTINGS.handlerLeaseMs);
    expect(await other.claimDue()).toBe(0);

    // The first process stops renewing (as a process that hangs or dies): its claims end with their leases.
    first.pump.stop();
    await vi.advanceTimersByTimeAsync(SETTINGS.handlerLeaseMs + 200);
    expect(await other.claimDue()).toBe(2);
    await other.whenIdle();
    expect(started).toEqual(['1:a', '1:b', '2:a', '2:b']);
    first.stopping.abort();
    await first.pump.finishing();
  });

  it('hands its claims back when it stops, so that another process runs the handlers at once', async () => {
    const store = await storeWithDue([event('candidate.added', 'a')]);
    cleanups.push(() => store.close());
    let running = false;
    const hanging = createHandlerRegistry();
    hanging.onAny((_e, { signal }) => {
      running = true;
      return new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const first = pump(store, hanging, 'process-1');
    first.pump.pump();
    await waitFor(() => running, 5000, 'the handler to run');
    first.stopping.abort();
    first.pump.stop();
    await first.pump.finishing();
    expect((await store.inboxRow(1))?.handlers_pending).toBe(true);

    const ran: number[] = [];
    const second = createHandlerRegistry();
    second.onAny((_e, context) => void ran.push(context.inboxId));
    const { pump: other } = pump(store, second, 'process-2');
    expect(await other.claimDue()).toBe(1);
    await other.whenIdle();
    expect(ran).toEqual([1]);
    expect((await store.inboxRow(1))?.handlers_pending).toBe(false);
  });
});
