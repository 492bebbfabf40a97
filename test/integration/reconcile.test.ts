// Reconciliation through the receiver's API on both engines, against an in-process sandbox that
// delivers no webhooks at all: everything the projection gets comes from the service's API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ENGINES } from '../support/engines.js';
import { JOB, KEY_A, person } from '../support/sandbox-api.js';

let sandbox: Sandbox;
let big: string;
let small: string;

beforeAll(async () => {
  sandbox = await createSandbox({ apiKeys: [KEY_A], credits: 1000, seed: 'reconcile-int', interviewMs: 50, log: () => {} });
  const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, throttle: false });
  big = (await client.createCampaign({ ...JOB, contract_type: 'CDD' })).campaign_id;
  small = (await client.createCampaign({ ...JOB, contract_type: 'CDI', job_title: 'Préparateur de commandes' })).campaign_id;
  // 130 candidates: two pages of the list.
  for (let i = 0; i < 130; i += 65) await client.addCandidates(big, { candidates: Array.from({ length: 65 }, (_, j) => person(i + j)) });
  await client.addCandidates(small, { contact_mode: 'sms', candidates: Array.from({ length: 4 }, (_, j) => person(500 + j)) });
  await client.changeCampaignStatus(small, 'paused');
  await sandbox.settle();
}, 60_000);
afterAll(() => sandbox.close());

describe.each(ENGINES)('reconcile on $name', (engine) => {
  let receiver: Receiver;
  let cleanup: () => void;
  const sent: string[] = [];
  const client = () =>
    createClient({
      apiKey: KEY_A,
      baseUrl: sandbox.url,
      fetch: (input, init) => {
        sent.push(new URL(input instanceof Request ? input.url : input).pathname);
        return fetch(input, init);
      },
    });
  const repairedByHandler: string[] = [];

  beforeAll(async () => {
    const fresh = await engine.fresh();
    cleanup = fresh.cleanup;
    receiver = createReceiver({ database: fresh.database, secret: 'whsec_reconcile_integration' });
    receiver.on('reconcile.candidate', (event, context) => {
      repairedByHandler.push(event.data.candidate_id);
      expect(context.row?.candidate_id).toBe(event.data.candidate_id);
    });
    await receiver.ready();
  });
  afterAll(async () => {
    await receiver.close();
    cleanup();
  });

  it('stops when asked and resumes at the campaign it stopped at', async () => {
    const stop = new AbortController();
    const first = await receiver.reconcile({
      client: client(),
      campaigns: [big, small],
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    expect(first).toMatchObject({ interrupted: true, resumed: false });
    expect(first.campaigns).toHaveLength(1);
    const done = first.campaigns[0]!.campaign_id;
    const other = done === big ? small : big;

    sent.length = 0;
    const second = await receiver.reconcile({ client: client(), campaigns: [big, small] });
    expect(second).toMatchObject({ interrupted: false, resumed: true });
    expect(second.campaigns.map((c) => c.campaign_id)).toEqual([other]);
    expect(sent.some((path) => path.includes(done))).toBe(false);
  });

  it('leaves the projection equal to the service, then finds nothing to repair', async () => {
    const client_ = client();
    for (const campaign of [big, small]) {
      const theirs = [];
      for await (const c of client_.eachCandidate(campaign, { sort: 'score_desc' })) theirs.push(c);
      const mine = [];
      for (let page = 1; ; page++) {
        const listed = await receiver.query.listCandidates(campaign, { page, per_page: 100, sort: 'score_desc' });
        mine.push(...listed.candidates);
        if (page >= listed.pagination.total_pages) break;
      }
      const fields = (c: {
        [K in 'candidate_id' | 'status' | 'interview_score' | 'email' | 'phone' | 'interview_date' | 'is_sourced' | 'concerns']?: unknown;
      }) => ({
        id: c.candidate_id,
        status: c.status,
        score: c.interview_score,
        email: c.email,
        phone: c.phone,
        date: c.interview_date == null ? null : new Date(c.interview_date as string).getTime(),
        sourced: c.is_sourced,
        concerns: c.concerns,
      });
      // As sets: the list does not say when a candidate was added, so among candidates without a
      // score, those known only from reconciliation do not share the service's tie order.
      const byId = (a: { id: unknown }, b: { id: unknown }) => String(a.id).localeCompare(String(b.id));
      expect(mine.map(fields).sort(byId)).toEqual(theirs.map(fields).sort(byId));
      expect(mine.map((c) => c.interview_score)).toEqual(theirs.map((c) => c.interview_score));
      const status = await client_.getCampaignStatus(campaign);
      expect((await receiver.query.getCampaign(campaign))?.stats).toEqual(status.stats);
      expect((await receiver.query.getCampaign(campaign))?.status).toBe(status.status);
    }
    expect((await receiver.query.getCredits()).credits_remaining).toBe((await client_.getCredits()).credits_available);
    expect(await receiver.counts()).toMatchObject({ pending: 0, unknown: 0, dead: 0 });

    await receiver.drain();
    expect(new Set(repairedByHandler).size).toBe(134);

    const again = await receiver.reconcile({ client: client_ });
    expect(again.repairs).toEqual([]);
    expect(again.written).toBe(0);
    expect(again.campaigns.map((c) => c.campaign_id).sort()).toEqual([big, small].sort());
  });

  it('reports a campaign the service does not know, without failing or writing', async () => {
    const report = await receiver.reconcile({ client: client(), campaigns: ['cmp_unknown_to_service'], dryRun: true });
    expect(report.campaigns.find((c) => c.campaign_id === 'cmp_unknown_to_service')).toMatchObject({ found: false });
    expect(report.written).toBe(0);
  });
});

// Its own sandbox: the service's rate limit is per key and per sandbox, and the suite above uses its share.
describe.each(ENGINES)('reconcile after an erasure on $name', (engine) => {
  it('never recreates an erased candidate the service still lists, and reports it', async () => {
    const service = await createSandbox({ apiKeys: [KEY_A], credits: 100, seed: 'reconcile-erased', interviewMs: 50, log: () => {} });
    const fresh = await engine.fresh();
    const receiver = createReceiver({ database: fresh.database, secret: 'whsec_reconcile_erasure_test' });
    try {
      const client = createClient({ apiKey: KEY_A, baseUrl: service.url, throttle: false });
      const campaign = (await client.createCampaign({ ...JOB, contract_type: 'CDI' })).campaign_id;
      await client.addCandidates(campaign, { contact_mode: 'sms', candidates: [person(700), person(701)] });
      await service.settle();
      await receiver.reconcile({ client, campaigns: [campaign] });
      await receiver.drain();
      const [first] = (await client.listCandidates(campaign, { sort: 'date_asc' })).candidates;
      await receiver.erase({ candidateId: first!.candidate_id }, { reason: 'request' });
      const report = await receiver.reconcile({ client, campaigns: [campaign] });
      expect(report.campaigns.find((c) => c.campaign_id === campaign)?.erasedButListed).toEqual([first!.candidate_id]);
      expect(report.repairs.filter((r) => r.key === first!.candidate_id)).toEqual([]);
      await receiver.drain();
      expect(await receiver.query.getCandidate(first!.candidate_id)).toBeUndefined();
      expect((await receiver.reconcile({ client, campaigns: [campaign] })).repairs).toEqual([]);
    } finally {
      await receiver.close();
      await service.close();
      fresh.cleanup();
    }
  });
});
