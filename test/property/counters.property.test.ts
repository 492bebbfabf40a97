// The counters (migrations/<engine>/*_counters.sql) as a property: after any interleaving of
// deliveries, redeliveries in other bytes, bodies set aside, projections, handler failures recorded
// and retried, dead letters put back, erasures and the removal of an account, every figure that
// /metrics, the console's overview and `inspect` read from them equals a full count of the rows:
// the inbox by state, the handler failures, each campaign's candidates (all, and by status) and
// the mean of its completed scores. Each run works in accounts of its own on one store per engine.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvelope, type WebhookEvent } from '../../src/events/index.js';
import { eraseCandidate, UnknownCandidateError } from '../../src/privacy/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import type { Store } from '../../src/store/store.js';
import { eventArbitrary } from '../support/arbitraries.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { projectPending } from '../support/project.js';
import { sqlOn, type TestSql } from '../support/sql.js';

const AT = '2026-11-22T00:00:00.000Z';
const STATUSES = ['pending', 'completed', 'voicemail', 'incomplete'] as const;
const CANDIDATES = ['cand-1', 'cand-2', 'cand-3', 'cand-4'];

// Bodies set aside: not JSON (dead, stays dead), an unknown kind (unknown), a known kind whose data
// does not match (dead, put back by a reprocess, and dead again).
const SET_ASIDE = [
  'not json at all',
  '{"event":"candidate.note","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"cmp_A"}}',
  '{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"cmp_A"}}',
];

type Step =
  | { op: 'deliver'; account: number; event: WebhookEvent; respelt: boolean }
  | { op: 'setAside'; account: number; body: number }
  | { op: 'project'; account: number; batchSize: number }
  | { op: 'failHandler'; account: number; pick: number }
  | { op: 'retryFailures'; account: number }
  | { op: 'reprocess'; account: number }
  | { op: 'erase'; account: number; candidate: string }
  | { op: 'removeAccount'; account: number };

const account = fc.nat(1);
const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ op: fc.constant('deliver' as const), account, event: eventArbitrary(), respelt: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('setAside' as const), account, body: fc.nat(SET_ASIDE.length - 1) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('project' as const), account, batchSize: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('failHandler' as const), account, pick: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('retryFailures' as const), account }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reprocess' as const), account }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('erase' as const), account, candidate: fc.constantFrom(...CANDIDATES) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('removeAccount' as const), account }) },
);

const bytesOf = (event: WebhookEvent, respelt: boolean) =>
  Buffer.from(
    respelt ? JSON.stringify({ data: event.data, timestamp: event.timestamp, event: event.event }, null, 1) : JSON.stringify(event),
  );

/** Every delivery so far, so that a redelivery is drawn among them. */
async function run(store: Store, step: Step, sent: Buffer[]): Promise<void> {
  switch (step.op) {
    case 'deliver':
    case 'setAside': {
      // One in three deliveries is a redelivery of something sent before (in other bytes or not).
      const raw = step.op === 'deliver' ? bytesOf(step.event, step.respelt) : Buffer.from(SET_ASIDE[step.body]!);
      sent.push(raw);
      const again = sent[(raw.length * 7) % sent.length]!;
      await store.append([deliveryOf(store.account, raw, readEnvelope(raw), AT, null)]);
      if (raw.length % 3 === 0) await store.append([deliveryOf(store.account, again, readEnvelope(again), AT, null)]);
      return;
    }
    case 'project':
      return projectPending(store, { ownAccountOnly: true, batchSize: step.batchSize });
    case 'failHandler': {
      // Handlers run after projection; a failure of any stored row counts the same.
      const stored = await store.readModel.eventIds({}, 50);
      if (stored.length === 0) return;
      const inboxId = stored[step.pick % stored.length]!;
      return store.recordHandlerFailure({ inbox_id: inboxId, handler: 'crm', error: 'refused', attempts: 3, failed_at: AT });
    }
    case 'retryFailures': {
      const failures = await store.handlerFailures(0, 100);
      await store.retryHandlerFailures(failures.filter((_, i) => i % 2 === 0).map((f) => f.failure_id));
      return;
    }
    case 'reprocess':
      await store.requeue((await store.setAside(0, 100)).map((row) => row.inbox_id));
      return;
    case 'erase':
      // A candidate not projected (yet, or any more) is refused: nothing changes then.
      await eraseCandidate(store, { candidateId: step.candidate }, { reason: 'property' }).catch((error: unknown) => {
        if (!(error instanceof UnknownCandidateError)) throw error;
      });
      return;
    case 'removeAccount':
      await store.write((tx) => tx.deleteAccountRows());
      return;
  }
}

/** The figures counted from the rows, as the read model and counts() give them. */
async function fullCount(sql: TestSql, account: string) {
  const byState = await sql.query<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM inbox WHERE account = ? GROUP BY state', [
    account,
  ]);
  const [failures] = await sql.query<{ n: number }>('SELECT COUNT(*) AS n FROM handler_failures WHERE account = ?', [account]);
  const inbox = { pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: Number(failures!.n) };
  for (const { state, n } of byState) inbox[state as keyof typeof inbox] = Number(n);
  const candidates = await sql.query<{ campaign_id: string | null; status: string | null; interview_score: number | null }>(
    'SELECT campaign_id, status, interview_score FROM candidates WHERE account = ?',
    [account],
  );
  const campaigns = await sql.query<{ campaign_id: string }>('SELECT campaign_id FROM campaigns WHERE account = ? ORDER BY campaign_id', [
    account,
  ]);
  const stats = campaigns.map(({ campaign_id }) => {
    const own = candidates.filter((c) => c.campaign_id === campaign_id);
    const scores = own.filter((c) => c.status === 'completed' && c.interview_score !== null).map((c) => c.interview_score!);
    return {
      campaign_id,
      total_candidates: own.length,
      interviews_completed: own.filter((c) => c.status === 'completed').length,
      average_score: scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length,
      byStatus: Object.fromEntries(STATUSES.map((s) => [s, own.filter((c) => c.status === s).length])),
    };
  });
  return { inbox, stats };
}

/** The same figures as the store reads them (the counters). */
async function counted(store: Store) {
  const campaigns = await store.readModel.campaigns({ limit: 10_000 });
  const stats = await Promise.all(
    [...campaigns]
      .sort((a, b) => (a.campaign_id < b.campaign_id ? -1 : 1))
      .map(async (c) => ({
        campaign_id: c.campaign_id,
        total_candidates: c.total_candidates,
        interviews_completed: c.interviews_completed,
        average_score: c.average_score,
        byStatus: Object.fromEntries(
          await Promise.all(
            STATUSES.map(async (status) => {
              const list = await store.readModel.listCandidates({
                campaignId: c.campaign_id,
                status,
                sort: 'date_desc',
                limit: 1,
                offset: 0,
              });
              return [status, list.total];
            }),
          ),
        ),
      })),
  );
  return { inbox: await store.counts(), stats };
}

describe.each(ENGINES)('counters on $name equal a full count', (engine) => {
  let store: Store;
  let database: string;
  let close: () => Promise<void>;
  let runs = 0;
  beforeAll(async () => {
    ({ store, database, close } = await freshStore(engine));
  });
  afterAll(async () => close());

  it('after any interleaving of the operations that change the counted rows', async () => {
    const sql = sqlOn(database);
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 40, size: 'medium' }), async (steps) => {
        // Accounts of this run only: what earlier runs left never meets it.
        const accounts = [`r${++runs}-a`, `r${runs}-b`].map((name) => store.forAccount(name));
        const sent: Buffer[] = [];
        for (const step of steps) await run(accounts[step.account]!, step, sent);
        for (const view of accounts) {
          const expected = await fullCount(sql, view.account);
          const actual = await counted(view);
          expect(actual.inbox).toEqual(expected.inbox);
          expect(actual.stats.map(({ average_score, ...s }) => s)).toEqual(expected.stats.map(({ average_score, ...s }) => s));
          actual.stats.forEach((s, i) => {
            const mean = expected.stats[i]!.average_score;
            if (mean === null) expect(s.average_score).toBeNull();
            else expect(s.average_score).toBeCloseTo(mean, 8);
          });
        }
      }),
      { numRuns: engine.name === 'sqlite' ? 60 : 20 },
    );
  });
});
