// Several accounts in one database (docs/projection.md section 9), on each engine: two accounts fed
// the same campaign and candidate ids with different values each read back their own state, and
// whatever is done to one (erasure, rebuild, removal) leaves the other as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPending } from '../support/project.js';
import { createHandlerRegistry, type HandlerRegistry } from '../../src/dispatch/handlers.js';
import { readEnvelope } from '../../src/events/index.js';
import { eraseCandidate } from '../../src/privacy/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { rebuild } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, freshStore } from '../support/engines.js';

const CAMPAIGN = 'cmp_shared';
const CANDIDATE = 'cand_shared';
const AT = '2026-11-22T00:00:00.000Z';

/** The same ids in every account, with the account's own values. */
const eventsOf = (name: string, score: number) => [
  sampleEvent('campaign.created', { data: { campaign_id: CAMPAIGN, job_title: `${name} job` } }),
  sampleEvent('candidate.added', {
    data: { campaign_id: CAMPAIGN, candidate_id: CANDIDATE, first_name: name, email: `${name.toLowerCase()}@example.org` },
  }),
  sampleEvent('candidate.interview.completed', {
    data: { campaign_id: CAMPAIGN, candidate_id: CANDIDATE, first_name: name, interview_score: score },
  }),
];

const raw = (event: unknown) => Buffer.from(JSON.stringify(event));
const deliveries = (account: string, bodies: readonly Buffer[]) =>
  bodies.map((body) => deliveryOf(account, body, readEnvelope(body), AT, null));

/** Projects the view's own pending rows as the dispatcher does, with these handlers. */
const project = (store: Store, handlers?: HandlerRegistry) =>
  projectPending(store, { ownAccountOnly: true, now: () => Date.parse(AT), batchSize: 2, ...(handlers && { handlers }) });

describe.each(ENGINES)('accounts kept apart on $name', (engine) => {
  let store: Store;
  let close: () => Promise<void>;
  let acme: Store;
  let bolt: Store;
  const shared = raw(sampleEvent('credits.low', { data: { credits_remaining: 3 } }));

  beforeAll(async () => {
    ({ store, close } = await freshStore(engine));
    acme = store.forAccount('acme');
    bolt = store.forAccount('bolt');
    const appended = await store.write(async (tx) => [
      ...(await tx.append(deliveries('acme', [...eventsOf('Alice', 8).map(raw), shared]))),
      ...(await tx.append(deliveries('bolt', [...eventsOf('Bruno', 3).map(raw), shared]))),
    ]);
    // The same bytes to two accounts are two events; neither is a duplicate.
    expect(appended.map((a) => a.duplicate)).toEqual(Array(8).fill(false));
    expect(await store.accountsWithWork()).toEqual({ projection: ['acme', 'bolt'], handlers: [] });
    const handlers = createHandlerRegistry();
    handlers.on('candidate.added', () => undefined);
    await project(acme, handlers);
    await project(bolt);
  });
  afterAll(() => close());

  it('gives one view per account over the same store, the default one first', async () => {
    expect(store.account).toBe('default');
    expect(acme.account).toBe('acme');
    expect(store.forAccount('acme')).toBe(acme);
    expect(acme.forAccount('default')).toBe(store);
    expect(await store.projected.campaignIds()).toEqual([]);
    expect(await store.counts()).toMatchObject({ pending: 0, projected: 0 });
  });

  it('reads back each account its own state under the same ids', async () => {
    expect(await acme.projected.candidate(CANDIDATE)).toMatchObject({ first_name: 'Alice', interview_score: 8 });
    expect(await bolt.projected.candidate(CANDIDATE)).toMatchObject({ first_name: 'Bruno', interview_score: 3 });
    expect((await acme.readModel.campaign(CAMPAIGN))?.job_title).toBe('Alice job');
    expect(await bolt.readModel.campaign(CAMPAIGN)).toMatchObject({ job_title: 'Bruno job', total_candidates: 1, average_score: 3 });
    expect((await acme.readModel.listCandidates({ campaignId: CAMPAIGN, sort: 'date_desc', limit: 10, offset: 0 })).total).toBe(1);
    expect(await acme.projected.credits()).toMatchObject({ credits_remaining: 3 });
    expect(await acme.counts()).toMatchObject({ projected: 4, pending: 0 });
    const [acmeRows, boltRows] = await Promise.all([
      acme.readModel.listEvents({}, { limit: 10 }),
      bolt.readModel.listEvents({}, { limit: 10 }),
    ]);
    expect(acmeRows).toHaveLength(4);
    expect(boltRows.some((row) => acmeRows.some((mine) => mine.inbox_id === row.inbox_id))).toBe(false);
    expect(await acme.readModel.event(boltRows[0]!.inbox_id)).toBeUndefined();
  });

  it('keeps identity per account: a redelivery to one account is its duplicate only', async () => {
    const again = await store.write((tx) => tx.append(deliveries('acme', [shared])));
    expect(again).toEqual([{ inboxId: null, duplicate: true }]);
    const [delivery] = deliveries('carta', [shared]);
    expect(
      await store.forAccount('carta').write((tx) => tx.known([{ identity: delivery!.identity!, eventAt: delivery!.eventAt }])),
    ).toEqual(new Set());
    expect(await acme.write((tx) => tx.known([{ identity: delivery!.identity!, eventAt: delivery!.eventAt }]))).toEqual(
      new Set([delivery!.identity]),
    );
  });

  it('says which accounts have work: handlers due in one, nothing pending in any', async () => {
    expect(await store.accountsWithWork()).toEqual({ projection: [], handlers: ['acme'] });
    const claimed = await bolt.claimHandlers({ owner: 'one', limit: 10, leaseMs: 60_000, running: new Set() });
    expect(claimed).toEqual([]);
    const mine = await acme.claimHandlers({ owner: 'one', limit: 10, leaseMs: 60_000, running: new Set() });
    expect(mine.map((row) => row.account)).toEqual(['acme']);
    await acme.handlersDone(mine[0]!.inbox_id);
    expect(await store.accountsWithWork()).toEqual({ projection: [], handlers: [] });
  });

  it("erases a candidate of one account, leaving the other's rows, bodies and audit trail", async () => {
    const before = await bolt.readModel.listEvents({}, { limit: 10 });
    const report = await eraseCandidate(acme, { candidateId: CANDIDATE }, { reason: 'request' });
    expect(report.candidateIds).toEqual([CANDIDATE]);
    expect(await acme.projected.candidate(CANDIDATE)).toBeUndefined();
    expect(await bolt.projected.candidate(CANDIDATE)).toMatchObject({ first_name: 'Bruno' });
    expect(await bolt.people.erasuresOf(CANDIDATE)).toEqual([]);
    expect(await bolt.people.rowsNaming([{ candidate_id: CANDIDATE, email: null, phone: null }])).toHaveLength(2);
    for (const row of before) expect((await bolt.readModel.event(row.inbox_id))?.raw).toEqual((await store.inboxRow(row.inbox_id))?.raw);
    const hooks = await store.write((tx) =>
      tx.claimErasureHooks(new Date().toISOString(), new Date(Date.now() + 60_000).toISOString(), 10),
    );
    expect(hooks.map((hook) => [hook.account, hook.candidateId])).toEqual([['acme', CANDIDATE]]);
  });

  it('rebuilds one account, leaving the other as it was', async () => {
    const boltBefore = await bolt.projected.candidate(CANDIDATE);
    const boltEvents = await bolt.readModel.listEvents({}, { limit: 10 });
    await rebuild(acme, { bulk: true, now: () => Date.parse('2026-12-01T00:00:00.000Z') });
    expect(await bolt.readModel.listEvents({}, { limit: 10 })).toEqual(boltEvents);
    expect(await acme.projected.candidate(CANDIDATE)).toBeUndefined(); // erased stays erased
    expect((await acme.readModel.campaign(CAMPAIGN))?.job_title).toBe('Alice job');
    expect(await bolt.projected.candidate(CANDIDATE)).toEqual(boltBefore);
    await rebuild(bolt, { bulk: false });
    expect(await bolt.projected.candidate(CANDIDATE)).toEqual(boltBefore);
    expect((await acme.readModel.campaign(CAMPAIGN))?.job_title).toBe('Alice job');
    expect(await acme.counts()).toMatchObject({ projected: 4, pending: 0 });
  });

  it("removes one account's rows, leaving the other's", async () => {
    const removed = await bolt.write((tx) => tx.deleteAccountRows());
    expect(removed).toEqual({ inboxRows: 4 });
    expect(await bolt.counts()).toEqual({ pending: 0, projected: 0, unknown: 0, dead: 0, handler_failures: 0 });
    expect(await bolt.projected.campaignIds()).toEqual([]);
    expect(await bolt.projected.credits()).toBeUndefined();
    expect(await acme.counts()).toMatchObject({ projected: 4 });
    expect((await acme.readModel.campaign(CAMPAIGN))?.job_title).toBe('Alice job');
    expect(await acme.people.erasuresOf(CANDIDATE)).toHaveLength(1);
  });
});
