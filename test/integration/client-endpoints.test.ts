// The typed client against the in-process sandbox over real HTTP: every operation of
// docs/client.md's table, the typed errors, and walking 250 candidates page by page.
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, PrequalApiError, PrequalNetworkError, type Client } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { DEFAULT_VOICES } from '../../src/sandbox/voices.js';
import { JOB as SAMPLE_JOB, KEY_A, KEY_B, person } from '../support/sandbox-api.js';

const JOB = { ...SAMPLE_JOB, contract_type: 'CDD' as const };

let sandbox: Sandbox;
let client: Client;
const sent: string[] = [];

beforeAll(async () => {
  // Interviews far off: the candidates stay as added while the test reads them.
  sandbox = await createSandbox({ apiKeys: [KEY_A, KEY_B], credits: 1000, seed: 'client', interviewMs: 600_000, log: () => {} });
  client = createClient({
    apiKey: KEY_A,
    baseUrl: sandbox.url,
    fetch: (input, init) => {
      sent.push(`${init?.method} ${new URL(input instanceof Request ? input.url : input).pathname}`);
      return fetch(input, init);
    },
  });
});
afterAll(() => sandbox.close());

describe('every endpoint', () => {
  it('creates, reads, modifies, pauses and lists a campaign; adds, sources, lists and reads candidates; voices; credits', async () => {
    const voices = await client.listVoices();
    expect(voices.default_voices).toEqual(DEFAULT_VOICES);
    const clone = voices.voice_clones[0]!.voice_id;

    const created = await client.createCampaign({
      ...JOB,
      language: 'fr',
      questions: ['Q1 ?', 'Q2 ?'],
      question_weights: [1, 2],
      override_agent_id: clone,
    });
    expect(created).toMatchObject({ status: 'active', questions_generated: 2, questions_source: 'default' });
    const id = created.campaign_id;

    const modified = await client.modifyCampaign(id, { job_title: 'Cariste CACES 5', automatic_selection_threshold: 9 });
    expect(modified.campaign_id).toBe(id);
    expect(await client.changeCampaignStatus(id, 'paused')).toMatchObject({ old_status: 'active', new_status: 'paused' });
    expect(await client.changeCampaignStatus(id, 'active')).toMatchObject({ old_status: 'paused', new_status: 'active' });

    const record = await client.getCampaign(id);
    expect(record).toMatchObject({
      job_title: 'Cariste CACES 5',
      automatic_selection_threshold: 9,
      override_agent_id: clone,
      is_voice_clone: true,
    });

    const added = await client.addCandidates(id, { candidates: [person(1), person(2)] });
    expect(added).toMatchObject({ candidates_added: 2, calls_queued: 2, errors: [] });
    const invited = await client.addCandidates(id, { candidates: [person(3)], contact_mode: 'email' });
    expect(invited).toMatchObject({ candidates_sourced: 1, emails_sent: 1 });
    const sourced = await client.sourceCandidates(id, { candidates: [{ first_name: 'Léa', last_name: 'Roux', phone: '+33611223344' }] });
    expect(sourced).toMatchObject({ candidates_sourced: 1, sms_sent: 1 });

    const status = await client.getCampaignStatus(id);
    expect(status.stats).toEqual({ total_candidates: 4, interviews_completed: 0, average_score: null });

    const page = await client.listCandidates(id, { per_page: 2, sort: 'date_asc', status: 'pending' });
    expect(page.pagination).toEqual({ total: 4, page: 1, per_page: 2, total_pages: 2 });
    expect(page.candidates.map((c) => c.first_name)).toEqual(['Prénom1', 'Prénom2']);

    const one = await client.getCandidate(id, page.candidates[0]!.candidate_id);
    expect(one).toMatchObject({ campaign_id: id, channel: 'call', phone: '+33610000001' });

    const campaigns = await client.listCampaigns({ status: 'active' });
    expect(campaigns.campaigns.map((c) => c.campaign_id)).toContain(id);
    const walked = [];
    for await (const c of client.eachCampaign()) walked.push(c.campaign_id);
    expect(walked).toContain(id);

    const credits = await client.getCredits();
    // Two calls at 1 credit, one SMS at 0.25, one e-mail free.
    expect(credits.credits_available).toBe(1000 - 2.25);

    const operations = new Set(sent.map((line) => line.replace(/cmp_[^/]+/, ':campaign_id').replace(/[0-9a-f-]{36}/, ':candidate_id')));
    expect([...operations].sort()).toEqual(
      [
        'GET /api/v1/voices',
        'POST /api/v1/campaigns/create',
        'PATCH /api/v1/campaigns/:campaign_id',
        'PATCH /api/v1/campaigns/:campaign_id/status',
        'GET /api/v1/campaigns/:campaign_id',
        'POST /api/v1/campaigns/:campaign_id/candidates',
        'POST /api/v1/campaigns/:campaign_id/source',
        'GET /api/v1/campaigns/:campaign_id/status',
        'GET /api/v1/campaigns/:campaign_id/candidates',
        'GET /api/v1/campaigns/:campaign_id/candidates/:candidate_id',
        'GET /api/v1/campaigns',
        'GET /api/v1/account/credits',
      ].sort(),
    );
  });

  it('takes the base address with or without /api/v1', async () => {
    const viaApiUrl = createClient({ apiKey: KEY_A, baseUrl: `${sandbox.apiUrl}/` });
    expect((await viaApiUrl.getCredits()).subscription_type).toBe('Service Resonance');
  });
});

describe('errors', () => {
  it('an answer in the envelope becomes a PrequalApiError with status, code, message, details and the request', async () => {
    const error = await client.getCampaignStatus('cmp_missing').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalApiError);
    expect(error).toMatchObject({
      status: 404,
      code: 'CAMPAIGN_NOT_FOUND',
      details: { campaign_id: 'cmp_missing' },
      local: false,
      attempts: 1,
      request: { endpoint: 'getCampaignStatus', method: 'GET', url: `${sandbox.apiUrl}/campaigns/cmp_missing/status` },
    });
  });

  it("another agency's campaign is not found; an unknown key is a 401", async () => {
    const { campaign_id } = await client.createCampaign(JOB);
    const asB = createClient({ apiKey: KEY_B, baseUrl: sandbox.url });
    await expect(asB.modifyCampaign(campaign_id, { job_title: 'x' })).rejects.toMatchObject({ status: 404, code: 'CAMPAIGN_NOT_FOUND' });
    const stranger = createClient({ apiKey: `sk_test_live_${'z'.repeat(32)}`, baseUrl: sandbox.url });
    await expect(stranger.getCredits()).rejects.toMatchObject({ status: 401, code: 'INVALID_API_KEY' });
  });

  it('keeps the request body off what is printed or serialised (it holds candidate PII), and never the key', async () => {
    const { campaign_id } = await client.createCampaign(JOB);
    await client.changeCampaignStatus(campaign_id, 'completed');
    const error = (await client.addCandidates(campaign_id, { candidates: [person(9)] }).catch((e: unknown) => e)) as PrequalApiError;
    expect(error.code).toBe('VALIDATION_ERROR');
    expect((error.request.body as { candidates: unknown[] }).candidates).toHaveLength(1);
    const printed = JSON.stringify({ ...error, request: error.request }) + String(error.stack) + inspect(error, { depth: 5 });
    expect(printed).not.toContain('candidat9@exemple.fr');
    expect(printed).not.toContain(KEY_A);
  });

  it('a connection refused is a PrequalNetworkError, marked as never sent', async () => {
    // A port that was just listened on and is closed now.
    const closed = await createSandbox({ log: () => {} });
    const url = closed.url;
    await closed.close();
    const offline = createClient({ apiKey: KEY_A, baseUrl: url, retry: { maxRetries: 0 } });
    const error = await offline.getCredits().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalNetworkError);
    expect(error).toMatchObject({ notSent: true, timedOut: false, attempts: 1 });
  });
});

describe('pagination', () => {
  it('walks 250 candidates with per_page 100: 250 distinct, in the order asked', async () => {
    const { campaign_id } = await client.createCampaign(JOB);
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => person(1000 + from + i));
    for (const [from, n] of [
      [0, 100],
      [100, 100],
      [200, 50],
    ] as const) {
      expect(await client.addCandidates(campaign_id, { candidates: batch(from, n), contact_mode: 'email' })).toMatchObject({
        candidates_sourced: n,
      });
    }
    const before = sent.length;
    const walked = [];
    for await (const candidate of client.eachCandidate(campaign_id, { per_page: 100, sort: 'date_asc' })) walked.push(candidate);
    expect(sent.length - before).toBe(3);
    expect(new Set(walked.map((c) => c.candidate_id)).size).toBe(250);
    expect(walked.map((c) => c.first_name)).toEqual(batch(0, 250).map((p) => p.first_name));

    // The filters travel on every page: no candidate is completed yet.
    const completed = [];
    for await (const candidate of client.eachCandidate(campaign_id, { status: 'completed', sort: 'score_desc' })) completed.push(candidate);
    expect(completed).toEqual([]);
  });
});
