// docs/projection.md section 9 as a property: N accounts fed the same campaign and candidate ids
// with different values (and each missing some events), their deliveries interleaved in any order
// with redeliveries in other bytes, stored through two connections (PostgreSQL: a replica) and
// projected by the dispatchers, which take the accounts with work in turn, converge each to the
// state of its own distinct events alone; and that state is the one a fresh database fed only that
// account's events (in the default account) projects, row for row.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/dispatch/dispatcher.js';
import { createHandlerRegistry } from '../../src/dispatch/handlers.js';
import { eventIdentity, parseEvent, readEnvelope, type WebhookEvent } from '../../src/events/index.js';
import { foldInOrder } from '../../src/project/fold.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { createGroupCommit } from '../../src/store/group-commit.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { eventArbitrary } from '../support/arbitraries.js';
import { ENGINES, freshStore, type EngineUnderTest } from '../support/engines.js';
import { emptyTables, readAccountRows, readStoreTables, readViewTables, stateTables, type Tables } from '../support/tables.js';

const ACCOUNTS = [DEFAULT_ACCOUNT, 'acme', 'bolt', 'carta-2', 'zeta_9'];
const MAX_EVENTS = 14;
const AT = '2026-11-22T00:00:00.000Z';
const quiet = { warn: () => {}, error: () => {} };

const TEXTS = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'job_title',
  'contract_type',
  'candidate_link',
  'availability',
  'salary_expectation',
  'candidate_alignment',
  'strengths',
  'concerns',
];
const plus = (value: unknown, add: (n: number) => number) => (typeof value === 'number' ? add(value) : value);

/** The event as the k-th account has it: the same kind, ids and instant, its own values (k = 0: as drawn, bytes and all). */
function valuesOf(event: WebhookEvent, k: number): WebhookEvent {
  if (k === 0) return event;
  const data = { ...(event.data as Record<string, unknown>) };
  for (const field of TEXTS) if (typeof data[field] === 'string') data[field] = `${data[field]} ${k}`;
  data.interview_score = plus(data.interview_score, (score) => (score + 2.5 * k) % 10);
  data.credits_remaining = plus(data.credits_remaining, (credits) => credits + 10 * k);
  data.threshold = plus(data.threshold, (threshold) => threshold + k);
  data.questions_count = plus(data.questions_count, (count) => count + k);
  if (Array.isArray(data.responses)) {
    data.responses = (data.responses as Array<{ answer: string; score: number }>).map((r) => ({
      ...r,
      answer: `${r.answer} ${k}`,
      score: (r.score + k) % 11,
    }));
  }
  for (const [key, value] of Object.entries(data)) if (value === undefined) delete data[key];
  return { ...event, data } as WebhookEvent;
}

/** One delivery of the run: whose, which event, in other bytes or not, through which connection, and whether a dispatcher drains after it. */
interface Sent {
  account: string;
  event: WebhookEvent;
  respelt: boolean;
  second: boolean;
  drainAfter: boolean;
}

interface Run {
  /** Each account's own events (with repeats when the draw repeated one). */
  own: Array<{ account: string; events: WebhookEvent[] }>;
  sent: Sent[];
  /** The account whose events a fresh database also projects. */
  alone: number;
  batchSize: number;
}

const accountsArbitrary = fc.integer({ min: 2, max: 4 }).chain((n) =>
  fc.record({
    events: fc.array(eventArbitrary(), { minLength: 1, maxLength: MAX_EVENTS }),
    accounts: fc.shuffledSubarray(ACCOUNTS, { minLength: n, maxLength: n }),
    // An account misses the events drawn 0 here (one in four).
    keep: fc.array(fc.array(fc.nat(3), { minLength: MAX_EVENTS, maxLength: MAX_EVENTS }), { minLength: n, maxLength: n }),
    alone: fc.nat(n - 1),
    batchSize: fc.integer({ min: 1, max: 5 }),
  }),
);

/** The accounts' events, every one sent once and some again, all in one random order. */
const runArbitrary: fc.Arbitrary<Run> = accountsArbitrary.chain(({ events, accounts, keep, alone, batchSize }) => {
  const own = accounts.map((account, k) => ({ account, events: events.filter((_, i) => keep[k]![i] !== 0).map((e) => valuesOf(e, k)) }));
  const once = own.flatMap(({ account, events }) => events.map((event) => ({ account, event })));
  return fc
    .subarray(once)
    .map((again) => [...once, ...again])
    .chain((all) =>
      fc.tuple(
        fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }),
        fc.array(fc.record({ respelt: fc.boolean(), second: fc.boolean(), drainAfter: fc.nat(5).map((n) => n === 0) }), {
          minLength: all.length,
          maxLength: all.length,
        }),
      ),
    )
    .map(([order, how]) => ({ own, sent: order.map((s, i) => ({ ...s, ...how[i]! })), alone, batchSize }));
});

// Another spelling of the same event: keys in another order, spaces (one identity, other bytes).
const bytesOf = ({ event, respelt }: Pick<Sent, 'event' | 'respelt'>) =>
  Buffer.from(
    respelt ? JSON.stringify({ data: event.data, timestamp: event.timestamp, event: event.event }, null, 1) : JSON.stringify(event),
  );
const deliver = (account: string, raw: Buffer) => deliveryOf(account, raw, readEnvelope(raw), AT, null);

function projectable(event: WebhookEvent) {
  const reading = parseEvent(event);
  if (!reading.ok) throw new Error(`the run made an invalid event: ${JSON.stringify(reading.issues)}`);
  return { event: reading.event, instant: reading.instant, identity: eventIdentity(event) };
}

/** The state of these events alone (docs/projection.md sections 1 to 8), and how many distinct events they are. */
function alone(events: readonly WebhookEvent[]): { tables: Tables; distinct: number } {
  return { tables: stateTables(foldInOrder(events.map(projectable))), distinct: new Set(events.map((e) => eventIdentity(e))).size };
}

/**
 * Stores the deliveries through the intake's group commit of the connection each names, a run of
 * deliveries to one connection at once (as concurrent requests), a dispatcher of that connection
 * draining where the run says; then both dispatchers drain together.
 */
async function feed(stores: readonly Store[], sent: readonly Sent[], batchSize: number): Promise<void> {
  const writers = stores.map((store) => createGroupCommit(store));
  const dispatchers = stores.map((store) =>
    createDispatcher({ store, handlers: createHandlerRegistry(), logger: quiet }, { batchSize, pollMs: 60_000 }),
  );
  try {
    let start = 0;
    for (let i = 0; i < sent.length; i++) {
      const s = sent[i]!;
      if (i + 1 < sent.length && !s.drainAfter && sent[i + 1]!.second === s.second) continue;
      const via = s.second ? 1 : 0;
      const outcomes = await Promise.all(sent.slice(start, i + 1).map((d) => writers[via]!.append(deliver(d.account, bytesOf(d)))));
      for (const outcome of outcomes) expect(outcome.ok).toBe(true);
      start = i + 1;
      if (s.drainAfter) await dispatchers[via]!.drain();
    }
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.drain()));
  } finally {
    await Promise.all(writers.map((writer) => writer.close()));
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.close(0)));
  }
}

describe.each(ENGINES)('on $name: accounts fed the same ids converge each to its own state', (engine: EngineUnderTest) => {
  let shared: { store: Store; database: string; close: () => Promise<void> };
  let second: Store;
  let fresh: { store: Store; database: string; close: () => Promise<void> };
  beforeAll(async () => {
    shared = await freshStore(engine);
    // PostgreSQL: a replica, another pool on the database; SQLite: a second connection to the file.
    second = await openStore(shared.database);
    fresh = await freshStore(engine);
  });
  afterAll(async () => {
    await second.close();
    await shared.close();
    await fresh.close();
  });

  it('in any interleaving, with redeliveries, through two connections: each account the state of its own distinct events', async () => {
    await fc.assert(
      fc.asyncProperty(runArbitrary, async ({ own, sent, alone: lone, batchSize }) => {
        await emptyTables(shared.database);
        await feed([shared.store, second], sent, batchSize);
        expect(await shared.store.accountsWithWork()).toEqual({ projection: [], handlers: [] });
        for (const { account, events } of own) {
          const expected = alone(events);
          expect(await readStoreTables(shared.database, { account }), account).toEqual(expected.tables);
          for (const store of [shared.store, second]) {
            const view = store.forAccount(account);
            expect(await readViewTables(view), account).toEqual(expected.tables);
            expect(await view.counts(), account).toEqual({
              pending: 0,
              projected: expected.distinct,
              unknown: 0,
              dead: 0,
              handler_failures: 0,
            });
          }
          const stats = await second.forAccount(account).readModel.campaigns({ limit: 10_000 });
          expect(stats.map((c) => [c.campaign_id, Number(c.total_candidates), Number(c.interviews_completed)]).sort(), account).toEqual(
            expected.tables.campaigns
              .map((c) => {
                const of = expected.tables.candidates.filter((k) => k.campaign_id === c.campaign_id);
                return [c.campaign_id, of.length, of.filter((k) => k.status === 'completed').length];
              })
              .sort(),
          );
        }
        // One account's events alone, in the default account of a fresh database: the same rows.
        const { account } = own[lone]!;
        await emptyTables(fresh.database);
        await feed(
          [fresh.store],
          sent.filter((s) => s.account === account).map((s) => ({ ...s, account: DEFAULT_ACCOUNT, second: false })),
          batchSize,
        );
        expect(await readAccountRows(shared.database, account), account).toEqual(await readAccountRows(fresh.database, DEFAULT_ACCOUNT));
      }),
      { numRuns: engine.name === 'sqlite' ? 80 : 30 },
    );
  }, 120_000);
});
