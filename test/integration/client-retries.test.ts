// 429, 5xx and lost answers between the client and the sandbox: a stub in front of the sandbox
// answers as scripted, then forwards. Waits run on a virtual clock (recorded, not slept), but two:
// one in real time, one held until the test wakes it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, PrequalApiError, PrequalNetworkError, PrequalResponseError, type ClientOptions } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { DEFAULT_VOICES } from '../../src/sandbox/voices.js';
import { JOB as SAMPLE_JOB, KEY_A, person } from '../support/sandbox-api.js';
import { waitFor } from '../support/wait-for.js';

const JOB = { ...SAMPLE_JOB, contract_type: 'CDD' as const };

/** What the stub does with the next request: answer itself, cut the connection, or forward. */
type Step = { status: number; body: string; headers?: Record<string, string> } | 'reset' | 'hang' | 'forward';
const envelope = (code: string, details?: Record<string, unknown>) =>
  JSON.stringify({ error: { code, message: `stub ${code}`, ...(details && { details }) } });
const TOO_MANY = (retryAfter: number): Step => ({ status: 429, body: envelope('RATE_LIMIT_EXCEEDED', { retry_after: retryAfter }) });
const FAILED: Step = { status: 500, body: envelope('INTERNAL_ERROR') };

let sandbox: Sandbox;
let stubUrl: string;
let closeStub: () => void;
let script: Step[] = [];
let hits: string[] = [];

async function forward(request: IncomingMessage, response: ServerResponse, body: Buffer) {
  const answer = await fetch(`${sandbox.url}${request.url}`, {
    method: request.method,
    headers: { 'x-api-key': String(request.headers['x-api-key']), 'content-type': 'application/json' },
    ...(body.length > 0 && { body }),
  });
  response.writeHead(answer.status, { 'content-type': 'application/json' });
  response.end(await answer.text());
}

beforeAll(async () => {
  sandbox = await createSandbox({ apiKeys: [KEY_A], credits: 1000, seed: 'client-retries', interviewMs: 600_000, log: () => {} });
  const stub = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      hits.push(`${request.method} ${request.url}`);
      const step = script.shift() ?? 'forward';
      if (step === 'reset') return request.socket.destroy();
      if (step === 'hang') return;
      if (step === 'forward') return void forward(request, response, Buffer.concat(chunks)).catch(() => response.destroy());
      response.writeHead(step.status, { 'content-type': 'application/json', ...step.headers });
      response.end(step.body);
    });
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  closeStub = () => {
    stub.closeAllConnections();
    stub.close();
  };
});
afterAll(async () => {
  closeStub();
  await sandbox.close();
});

let now = 0;
let sleeps: number[] = [];
beforeEach(() => {
  script = [];
  hits = [];
  sleeps = [];
  now = Date.parse('2026-03-10T09:00:00.000Z');
});
/** Time moves only when the client sleeps; every sleep is recorded. */
const virtualClock = { now: () => now, sleep: async (ms: number) => void (sleeps.push(ms), (now += ms)) };

const clientOf = (options: Partial<ClientOptions> = {}) =>
  createClient({
    apiKey: KEY_A,
    baseUrl: stubUrl,
    clock: virtualClock,
    random: () => 1,
    retry: { baseDelayMs: 100, maxRetries: 3 },
    ...options,
  });

describe('429: wait what the service says, then again', () => {
  it('honours details.retry_after (real time: 1 s)', async () => {
    script = [TOO_MANY(1)];
    const client = createClient({ apiKey: KEY_A, baseUrl: stubUrl });
    const started = Date.now();
    const credits = await client.getCredits();
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(credits.credits_available).toBe(1000);
    expect(hits).toEqual(['GET /api/v1/account/credits', 'GET /api/v1/account/credits']);
  });

  it('sends a POST again, even creating a campaign (a 429 is a request not applied): one campaign', async () => {
    const before = (await clientOf().listCampaigns()).pagination.total;
    script = [TOO_MANY(2)];
    hits = [];
    const created = await clientOf().createCampaign(JOB);
    expect(sleeps).toEqual([2000]);
    expect(hits).toHaveLength(2);
    const after = await clientOf().listCampaigns();
    expect(after.pagination.total).toBe(before + 1);
    expect(after.campaigns[0]!.campaign_id).toBe(created.campaign_id);
  });

  it('holds back the other calls of the client too (the key is refused, not the request)', async () => {
    script = [TOO_MANY(5)];
    // Sleeps end when the test wakes them, so that the second call starts while the first waits.
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let sleeping = 0;
    const heldClock = {
      now: () => now,
      sleep: async (ms: number) => {
        sleeping++;
        const target = now + ms;
        await woken;
        now = Math.max(now, target);
      },
    };
    const client = clientOf({ clock: heldClock });
    const first = client.getCredits();
    await waitFor(() => sleeping === 1, 5000, 'the 429, and its wait begun');
    const voicesAt = client.listVoices().then(() => now);
    // Held back: the second call waits on the clock for the key's pause instead of going out.
    await waitFor(() => sleeping === 2, 5000, 'the second call to wait for the pause');
    wake();
    await first;
    expect(hits).toHaveLength(3);
    expect(await voicesAt).toBeGreaterThanOrEqual(Date.parse('2026-03-10T09:00:05.000Z'));
  });

  it('a retry_after beyond maxRetryAfterMs is thrown at once', async () => {
    script = [TOO_MANY(3600)];
    const error = await clientOf()
      .getCredits()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: 3600 }, attempts: 1 });
    expect(sleeps).toEqual([]);
  });
});

describe('5xx and lost answers: exponential backoff with jitter, where a retry is safe', () => {
  it('500 then success on a GET', async () => {
    script = [FAILED];
    expect((await clientOf().listVoices()).default_voices).toEqual(DEFAULT_VOICES);
    expect(hits).toHaveLength(2);
    expect(sleeps).toEqual([100]);
  });

  it('500, 503 then success on adding candidates: retried, doubling the wait', async () => {
    const { campaign_id } = await clientOf().createCampaign(JOB);
    hits = [];
    script = [FAILED, { status: 503, body: envelope('INTERNAL_ERROR') }];
    expect(await clientOf().addCandidates(campaign_id, { candidates: [person(1)] })).toMatchObject({ candidates_added: 1 });
    expect(hits).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('an answer lost after adding: the retry adds nobody twice and charges nothing more', async () => {
    const client = clientOf();
    const { campaign_id } = await client.createCampaign(JOB);
    const before = (await client.getCredits()).credits_available;
    // The first attempt is applied by the sandbox, then its answer is lost.
    const forwardThenLose = createClient({ apiKey: KEY_A, baseUrl: sandbox.url });
    await forwardThenLose.addCandidates(campaign_id, { candidates: [person(2)] });
    script = [FAILED];
    const answer = await client.addCandidates(campaign_id, { candidates: [person(2)] });
    expect(answer).toMatchObject({ candidates_added: 0, candidates_skipped: 1 });
    expect((await client.getCredits()).credits_available).toBe(before - 1);
    expect((await client.getCampaignStatus(campaign_id)).stats.total_candidates).toBe(1);
  });

  it('creating a campaign is not retried after a 500 (it could create two)', async () => {
    script = [FAILED];
    const error = await clientOf()
      .createCampaign(JOB)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalApiError);
    expect(error).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', attempts: 1 });
    expect(hits).toHaveLength(1);
  });

  it('creating a campaign is not retried after a connection reset either', async () => {
    script = ['reset'];
    const error = await clientOf()
      .createCampaign(JOB)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalNetworkError);
    expect(error).toMatchObject({ notSent: false, attempts: 1 });
    expect(hits).toHaveLength(1);
  });

  it('a reset then success on a GET', async () => {
    script = ['reset'];
    expect((await clientOf().getCredits()).subscription_type).toBe('Service Resonance');
    expect(hits).toHaveLength(2);
  });

  it('bounded by maxRetries: 1 + 2 attempts, then the last error', async () => {
    script = [FAILED, FAILED, FAILED, FAILED];
    const error = await clientOf({ retry: { baseDelayMs: 100, maxRetries: 2 } })
      .getCredits()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, attempts: 3 });
    expect(hits).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('jitter: the wait is between half and all of the doubled delay', async () => {
    script = [FAILED, FAILED];
    await clientOf({ random: () => 0 }).getCredits();
    expect(sleeps).toEqual([50, 100]);
  });

  it("a 502 from a proxy, not in the service's envelope: retried, then a PrequalResponseError", async () => {
    const page: Step = { status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } };
    script = [page, page];
    const error = await clientOf({ retry: { baseDelayMs: 100, maxRetries: 1 } })
      .getCredits()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalResponseError);
    expect(error).toMatchObject({ status: 502 });
    expect(hits).toHaveLength(2);
  });

  it('a connection refused: nothing was sent, so even creating a campaign is tried again', async () => {
    const gone = await createSandbox({ log: () => {} });
    await gone.close();
    let attempts = 0;
    const client = createClient({
      apiKey: KEY_A,
      baseUrl: gone.url,
      clock: virtualClock,
      retry: { baseDelayMs: 100, maxRetries: 2 },
      fetch: (input, init) => (attempts++, fetch(input, init)),
    });
    const error = await client.createCampaign(JOB).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PrequalNetworkError', notSent: true, attempts: 3 });
    expect(attempts).toBe(3);
  });
});

describe('answers that are not the documented ones', () => {
  it('no answer within timeoutMs: a PrequalNetworkError, timed out', async () => {
    script = ['hang'];
    const error = await clientOf({ timeoutMs: 100, retry: { maxRetries: 0 } })
      .getCredits()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PrequalNetworkError);
    expect(error).toMatchObject({ timedOut: true, notSent: false, attempts: 1 });
  });

  it('a 200 whose body is off its schema: a PrequalResponseError naming the fields, not retried', async () => {
    script = [{ status: 200, body: JSON.stringify({ credits_available: 'lots' }) }];
    const error = (await clientOf()
      .getCredits()
      .catch((e: unknown) => e)) as PrequalResponseError;
    expect(error).toBeInstanceOf(PrequalResponseError);
    expect(error.issues.join(' ')).toMatch(/credits_available/);
    expect(error.issues.join(' ')).not.toContain('lots');
    expect(hits).toHaveLength(1);
  });
});
