// Webhook delivery as the service does it: retries with exponential delay, the 5 s limit,
// signatures, subscriptions, and the faults, against small real node:http receivers.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEvent, readEnvelope } from '../../src/events/index.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { verify } from '../../src/signature.js';
import { apiClient, JOB, KEY_A, person } from '../support/sandbox-api.js';
import { listen } from '../support/servers.js';

const SECRET = 'whsec_sandbox_delivery_5f1c';

interface Arrival {
  kind: string | undefined;
  signature: string | undefined;
  contentType: string | undefined;
  body: string;
  identity: string;
  at: number;
}

/** A receiver that records every request and answers as `answer` says (by how often it saw that identity). */
async function receiver(answer: (seen: number, res: ServerResponse, req: IncomingMessage) => void = (_s, res) => res.end('{}')) {
  const arrivals: Arrival[] = [];
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const reading = readEnvelope(bytes);
      const identity = reading.ok ? reading.identity : 'unreadable';
      arrivals.push({
        kind: req.headers['x-service-event'] as string | undefined,
        signature: req.headers['x-service-signature'] as string | undefined,
        contentType: req.headers['content-type'],
        body: bytes.toString('utf8'),
        identity,
        at: performance.now(),
      });
      const n = (seen.get(identity) ?? 0) + 1;
      seen.set(identity, n);
      answer(n, res, req);
    });
  });
  const listening = await listen(server);
  return { ...listening, arrivals, webhookUrl: `${listening.url}/webhooks` };
}

/** Arrivals grouped by event identity, in order of first arrival (Map.groupBy is Node 21+). */
function byIdentityOf(arrivals: Arrival[]): Map<string, Arrival[]> {
  const groups = new Map<string, Arrival[]>();
  for (const a of arrivals) groups.set(a.identity, [...(groups.get(a.identity) ?? []), a]);
  return groups;
}

const open: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

async function start(options: Parameters<typeof createSandbox>[0]): Promise<Sandbox> {
  const sandbox = await createSandbox({ apiKeys: [KEY_A], seed: 'delivery', interviewMs: 600_000, ...options });
  open.push(sandbox);
  return sandbox;
}

/** campaign.created, then campaign.status_changed: two events, no simulated life. */
async function twoEvents(sandbox: Sandbox) {
  const call = apiClient(sandbox.apiUrl, KEY_A);
  const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id;
  await call('PATCH', `/campaigns/${id}/status`, { status: 'paused' });
  return id as string;
}

describe('webhook delivery', () => {
  it('a receiver that answers 500 three times, then 200: each event arrives 4 times, 1, 2 and 4 retry delays apart', async () => {
    const hooks = await receiver((seen, res) => {
      res.statusCode = seen <= 3 ? 500 : 200;
      res.end('{}');
    });
    open.push(hooks);
    const base = 60;
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, webhookSecret: SECRET, retryBaseMs: base });
    await twoEvents(sandbox);
    await sandbox.settle(10_000);

    const byIdentity = byIdentityOf(hooks.arrivals);
    expect([...byIdentity.values()].map((list) => [list[0]!.kind, list.length])).toEqual([
      ['campaign.created', 4],
      ['campaign.status_changed', 4],
    ]);
    for (const list of byIdentity.values()) {
      const gaps = list.slice(1).map((a, i) => a.at - list[i]!.at);
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(base * 2 ** i * 0.9));
      expect(new Set(list.map((a) => a.body)).size).toBe(1);
    }
    const attempts = sandbox.deliveries().filter((a) => a.event === 'campaign.created');
    expect(attempts.map((a) => [a.attempt, a.status, a.error, a.outcome])).toEqual([
      [1, 500, null, 'retrying'],
      [2, 500, null, 'retrying'],
      [3, 500, null, 'retrying'],
      [4, 200, null, 'delivered'],
    ]);
    expect(attempts[0]).toMatchObject({ identity: byIdentity.keys().next().value, copy: 'original', at: expect.stringMatching(/Z$/) });
  });

  it('a receiver that always fails (500, then 404): 4 attempts, then logged as failed; a refused connection too', async () => {
    const hooks = await receiver((seen, res) => {
      res.statusCode = seen === 1 ? 500 : 404;
      res.end();
    });
    open.push(hooks);
    const logged: string[] = [];
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, retryBaseMs: 10, log: (line) => logged.push(line) });
    await twoEvents(sandbox);
    await sandbox.settle(10_000);
    expect(hooks.arrivals).toHaveLength(8);
    const created = sandbox.deliveries().filter((a) => a.event === 'campaign.created');
    expect(created.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 404, 'retrying'],
      [3, 404, 'retrying'],
      [4, 404, 'failed'],
    ]);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatch(/gave up delivering campaign\.created .* after 4 attempts: 404/);

    // Nothing listens on a port that was just closed.
    const gone = await receiver();
    await gone.close();
    const refused = await start({ webhookUrl: gone.webhookUrl, retryBaseMs: 10, log: (line) => logged.push(line) });
    await apiClient(refused.apiUrl, KEY_A)('POST', '/campaigns/create', JOB);
    await refused.settle(10_000);
    expect(refused.deliveries().map((a) => [a.attempt, a.status, a.error, a.outcome])).toEqual([
      [1, null, 'ECONNREFUSED', 'retrying'],
      [2, null, 'ECONNREFUSED', 'retrying'],
      [3, null, 'ECONNREFUSED', 'retrying'],
      [4, null, 'ECONNREFUSED', 'failed'],
    ]);
  });

  it('a receiver that sleeps 6 s: the attempt times out at 5 s and the retry is delivered', async () => {
    const hooks = await receiver((seen, res) => {
      if (seen === 1) setTimeout(() => res.end('{}'), 6000).unref();
      else res.end('{}');
    });
    open.push(hooks);
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, retryBaseMs: 10 });
    await apiClient(sandbox.apiUrl, KEY_A)('POST', '/campaigns/create', JOB);
    await sandbox.settle(15_000);
    const attempts = sandbox.deliveries();
    expect(attempts.map((a) => [a.attempt, a.status, a.error, a.outcome])).toEqual([
      [1, null, 'timeout after 5000 ms', 'retrying'],
      [2, 200, null, 'delivered'],
    ]);
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(4900);
    expect(hooks.arrivals).toHaveLength(2);
  }, 20_000);

  it('signs with X-Service-Signature (verified by our own verify), names the kind in X-Service-Event, sends valid events', async () => {
    const hooks = await receiver();
    open.push(hooks);
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, webhookSecret: SECRET });
    await twoEvents(sandbox);
    await sandbox.settle(5000);
    expect(hooks.arrivals).toHaveLength(2);
    for (const arrival of hooks.arrivals) {
      expect(arrival.contentType).toBe('application/json');
      expect(verify([SECRET], arrival.body, arrival.signature)).toEqual({ ok: true, secretIndex: 0 });
      expect(verify(['another secret'], arrival.body, arrival.signature)).toEqual({ ok: false, reason: 'MISMATCH' });
      const reading = readEnvelope(Buffer.from(arrival.body));
      expect(reading.ok).toBe(true);
      if (!reading.ok) return;
      expect(parseEvent(reading.envelope).ok).toBe(true);
      expect(arrival.kind).toBe(reading.envelope.event);
    }

    // Without a secret, no signature header at all.
    const unsigned = await receiver();
    open.push(unsigned);
    const plain = await start({ webhookUrl: unsigned.webhookUrl });
    await twoEvents(plain);
    await plain.settle(5000);
    expect(unsigned.arrivals.map((a) => a.signature)).toEqual([undefined, undefined]);
  });

  it('sends only the subscribed events', async () => {
    const hooks = await receiver();
    open.push(hooks);
    // Short interviews, so that the invitation's life ends quickly; its events are not subscribed.
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, events: ['campaign.status_changed', 'candidate.added'], interviewMs: 10 });
    const id = await twoEvents(sandbox);
    await apiClient(sandbox.apiUrl, KEY_A)('POST', `/campaigns/${id}/candidates`, { contact_mode: 'email', candidates: [person(1)] });
    await sandbox.settle(5000);
    expect(hooks.arrivals.map((a) => a.kind)).toEqual(['campaign.status_changed', 'candidate.added']);
  });

  it('--duplicates with --reserialize: each event twice, other bytes (each signed) but the same identity', async () => {
    const hooks = await receiver();
    open.push(hooks);
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, webhookSecret: SECRET, duplicates: 1, reserialize: true });
    await twoEvents(sandbox);
    await sandbox.settle(5000);
    const byIdentity = byIdentityOf(hooks.arrivals);
    expect([...byIdentity.values()].map((list) => list.length)).toEqual([2, 2]);
    for (const [first, second] of byIdentity.values()) {
      expect(first!.body).not.toBe(second!.body);
      expect(JSON.parse(first!.body)).toEqual(JSON.parse(second!.body));
      for (const copy of [first!, second!]) expect(verify([SECRET], copy.body, copy.signature).ok).toBe(true);
    }
    expect(
      sandbox
        .deliveries()
        .map((a) => a.copy)
        .sort(),
    ).toEqual(['duplicate', 'duplicate', 'original', 'original']);

    // Without --reserialize a duplicate is the same bytes.
    const plain = await receiver();
    open.push(plain);
    const same = await start({ webhookUrl: plain.webhookUrl, duplicates: 1 });
    await twoEvents(same);
    await same.settle(5000);
    expect(plain.arrivals).toHaveLength(4);
    expect(new Set(plain.arrivals.map((a) => a.body)).size).toBe(2);
  });

  it('--reorder holds some deliveries back behind later ones; every event still arrives once', async () => {
    const hooks = await receiver();
    open.push(hooks);
    const sandbox = await start({
      webhookUrl: hooks.webhookUrl,
      reorder: 0.5,
      seed: 'reorder',
      interviewMs: 10,
      events: ['campaign.created', 'candidate.added'],
    });
    const call = apiClient(sandbox.apiUrl, KEY_A);
    const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id;
    await call('POST', `/campaigns/${id}/candidates`, {
      contact_mode: 'email',
      candidates: Array.from({ length: 12 }, (_, i) => person(i)),
    });
    await sandbox.settle(10_000);
    expect(hooks.arrivals).toHaveLength(13);
    expect(new Set(hooks.arrivals.map((a) => a.identity)).size).toBe(13);
    const stamps = hooks.arrivals.map((a) => JSON.parse(a.body).timestamp as string);
    expect(stamps).not.toEqual([...stamps].sort());
  });

  it('POST /sandbox/test-event sends a sample of the kind asked, signed; GET /sandbox/deliveries lists the attempts', async () => {
    const hooks = await receiver();
    open.push(hooks);
    const sandbox = await start({ webhookUrl: hooks.webhookUrl, webhookSecret: SECRET, events: ['credits.low'] });
    const test = await fetch(`${sandbox.url}/sandbox/test-event`, {
      method: 'POST',
      body: JSON.stringify({ event: 'candidate.interview.completed' }),
    });
    expect(test.status).toBe(202);
    const answer = (await test.json()) as { event: string; identity: string };
    expect(answer.event).toBe('candidate.interview.completed');
    const byDefault = await fetch(`${sandbox.url}/sandbox/test-event`, { method: 'POST' });
    expect(((await byDefault.json()) as { event: string }).event).toBe('campaign.created');
    const wrong = await fetch(`${sandbox.url}/sandbox/test-event`, { method: 'POST', body: JSON.stringify({ event: 'candidate.hired' }) });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_ERROR');
    await sandbox.settle(5000);
    expect(hooks.arrivals.map((a) => a.kind)).toEqual(['candidate.interview.completed', 'campaign.created']);
    expect(verify([SECRET], hooks.arrivals[0]!.body, hooks.arrivals[0]!.signature).ok).toBe(true);
    expect(hooks.arrivals[0]!.identity).toBe(answer.identity);

    const listed = (await (await fetch(`${sandbox.url}/sandbox/deliveries`)).json()) as { idle: boolean; attempts: unknown[] };
    expect(listed.idle).toBe(true);
    expect(listed.attempts).toEqual([
      expect.objectContaining({
        event: 'candidate.interview.completed',
        identity: answer.identity,
        attempt: 1,
        status: 200,
        error: null,
        outcome: 'delivered',
        at: expect.any(String),
      }),
      expect.objectContaining({ event: 'campaign.created', attempt: 1, status: 200 }),
    ]);
  });
});
