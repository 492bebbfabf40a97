// The typed client against the real sandbox over HTTP: every endpoint, the rules it checks before
// sending, 429 and 500 then success, pagination over 250 candidates, and its own throttle.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createThrottle, PrequalApiError, PrequalNetworkError } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { JOB as JOB_TEXT, KEY_A, person } from '../support/sandbox-api.js';

const JOB = { ...JOB_TEXT, contract_type: 'CDD' as const };

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ apiKeys: [KEY_A], credits: 1000, seed: 'client', interviewMs: 600_000, log: () => {} });
});
afterAll(() => sandbox.close());

/** A fetch that counts the requests it lets through. */
function countingFetch() {
  const seen: string[] = [];
  const counted: typeof fetch = (input, init) => {
    seen.push(`${init?.method ?? 'GET'} ${String(input)}`);
    return fetch(input, init);
  };
  return { seen, fetch: counted };
}

/** A proxy in front of the sandbox that answers the first `n` requests with `status` and the envelope. */
async function flakyProxy(status: number, n: number, details: Record<string, unknown> = {}) {
  let left = n;
  const target = new URL(sandbox.url);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (left > 0) {
      left--;
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: status === 429 ? 'RATE_LIMIT_EXCEEDED' : 'INTERNAL_ERROR', message: 'try again', details } }));
      return;
    }
    const forward = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('the typed client against the sandbox', () => {
  it('covers every endpoint', async () => {
    const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url });
    const created = await client.createCampaign({ ...JOB, language: 'fr' });
    const id = created.campaign_id;
    expect(id).toEqual(expect.any(String));
    expect((await client.modifyCampaign(id, { job_title: 'Cariste CACES 3 et 5' })).campaign_id).toBe(id);
    expect((await client.getCampaign(id)).job_title).toBe('Cariste CACES 3 et 5');
    expect((await client.listCampaigns()).campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toContain(id);
    expect((await client.changeCampaignStatus(id, 'paused')).new_status).toBe('paused');
    expect((await client.changeCampaignStatus(id, 'active')).new_status).toBe('active');
    const added = await client.addCandidates(id, { candidates: [person(1), person(2)], contact_mode: 'email' });
    expect(added.errors).toEqual([]);
    const sourced = await client.sourceCandidates(id, { candidates: [person(3)] });
    expect(sourced.errors).toEqual([]);
    const list = await client.listCandidates(id, { sort: 'date_asc' });
    expect(list.pagination.total).toBe(3);
    expect((await client.getCandidate(id, list.candidates[0]!.candidate_id)).candidate_id).toBe(list.candidates[0]!.candidate_id);
    expect((await client.getCampaignStatus(id)).stats).toMatchObject({ total_candidates: 3 });
    expect(await client.listVoices()).toHaveProperty('default_voices');
    expect((await client.getCredits()).credits_available).toEqual(expect.any(Number));
  });

  it('checks the documented rules before sending: the service\'s code, and no request made', async () => {
    const counter = countingFetch();
    const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url, fetch: counter.fetch });
    const cases: Array<[() => Promise<unknown>, string, number]> = [
      [() => client.createCampaign({ job_title: 'x', contract_type: 'CDI' } as never), 'MISSING_REQUIRED_FIELDS', 400],
      [() => client.createCampaign({ ...JOB, contract_type: 'Mission' } as never), 'INVALID_CONTRACT_TYPE', 400],
      [() => client.createCampaign({ ...JOB, questions: Array.from({ length: 11 }, (_, i) => `Q${i}?`), question_weights: Array(11).fill(1) }), 'TOO_MANY_QUESTIONS', 400],
      [() => client.createCampaign({ ...JOB, questions: ['Q?'] }), 'MISSING_QUESTION_WEIGHTS', 400],
      [() => client.createCampaign({ ...JOB, questions: ['Q?'], question_weights: [1, 1] }), 'WEIGHTS_MISMATCH', 400],
      [() => client.createCampaign({ ...JOB, questions: ['Q?'], question_weights: [0.7] } as never), 'INVALID_WEIGHT_VALUE', 400],
      [() => client.createCampaign({ ...JOB, automatic_selection_threshold: 7 } as never), 'INVALID_AUTOMATIC_SELECTION_THRESHOLD', 400],
      [() => client.createCampaign({ ...JOB, engage_message: 'x'.repeat(351) }), 'MESSAGE_TOO_LONG', 400],
      [() => client.addCandidates('cmp', { candidates: Array.from({ length: 101 }, (_, i) => person(i)) }), 'TOO_MANY_CANDIDATES', 400],
      [() => client.listCandidates('cmp', { per_page: 101 }), 'VALIDATION_ERROR', 400],
      [() => client.changeCampaignStatus('cmp', 'archived' as never), 'VALIDATION_ERROR', 400],
    ];
    for (const [attempt, code, status] of cases) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error, code).toBeInstanceOf(PrequalApiError);
      expect(error).toMatchObject({ code, status, local: true });
    }
    expect(counter.seen).toEqual([]);
  });

  it('turns the service\'s errors into PrequalApiError, with the request it came from', async () => {
    const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url });
    const error = await client.getCampaignStatus('cmp_nope').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalApiError);
    expect(error).toMatchObject({ status: 404, code: 'CAMPAIGN_NOT_FOUND', local: false, request: { method: 'GET', path: '/campaigns/cmp_nope/status' } });
    const bad = createClient({ apiKey: 'nope', baseUrl: sandbox.url });
    expect(await bad.getCredits().catch((e: unknown) => e)).toMatchObject({ status: 401, code: 'INVALID_API_KEY_FORMAT' });
  });

  it('waits out a 429 as told (details.retry_after), then succeeds', async () => {
    const proxy = await flakyProxy(429, 1, { retry_after: 1 });
    const waits: number[] = [];
    const client = createClient({ apiKey: KEY_A, baseUrl: proxy.url, sleep: async (ms) => void waits.push(ms) });
    expect(await client.getCredits()).toHaveProperty('credits_available');
    expect(waits).toEqual([1000]);
    await proxy.close();
  });

  it('retries a 5xx with backoff where a retry is safe, then succeeds; a campaign creation is not repeated', async () => {
    const proxy = await flakyProxy(500, 2);
    const waits: number[] = [];
    const client = createClient({ apiKey: KEY_A, baseUrl: proxy.url, retryBaseMs: 100, sleep: async (ms) => void waits.push(ms) });
    expect(await client.getCredits()).toHaveProperty('credits_available');
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(50);
    expect(waits[1]).toBeGreaterThanOrEqual(100); // doubled, with jitter
    await proxy.close();

    const once = await flakyProxy(500, 1);
    const creating = createClient({ apiKey: KEY_A, baseUrl: once.url, sleep: async () => undefined });
    expect(await creating.createCampaign({ ...JOB }).catch((e: unknown) => e)).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    await once.close();
  });

  it('says PrequalNetworkError when nothing answers, after the retries', async () => {
    const client = createClient({ apiKey: KEY_A, baseUrl: 'http://127.0.0.1:9', retries: 1, sleep: async () => undefined });
    expect(await client.getCredits().catch((e: unknown) => e)).toBeInstanceOf(PrequalNetworkError);
  });

  it('walks 250 candidates page by page', async () => {
    const client = createClient({ apiKey: KEY_A, baseUrl: sandbox.url });
    const { campaign_id } = await client.createCampaign({ ...JOB });
    for (const [from, count] of [[1000, 100], [1100, 100], [1200, 50]] as const) {
      await client.addCandidates(campaign_id, { candidates: Array.from({ length: count }, (_, i) => person(from + i)), contact_mode: 'email' });
    }
    const seen = new Set<string>();
    for await (const candidate of client.candidates(campaign_id, { sort: 'date_asc' })) seen.add(candidate.candidate_id);
    expect(seen.size).toBe(250);
  });
});

describe('the client\'s throttle', () => {
  it('keeps any sliding minute within 60 requests and any hour within 1,000', async () => {
    let t = 0;
    const starts: number[] = [];
    const throttle = createThrottle({ now: () => t, sleep: async (ms) => void (t += ms) });
    for (let i = 0; i < 1100; i++) {
      await throttle.acquire();
      starts.push(t);
    }
    for (let i = 60; i < starts.length; i++) expect(starts[i]! - starts[i - 60]!).toBeGreaterThanOrEqual(60_000);
    for (let i = 1000; i < starts.length; i++) expect(starts[i]! - starts[i - 1000]!).toBeGreaterThanOrEqual(3_600_000);
  });
});
