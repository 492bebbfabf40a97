// The simulated life: calls and invitations end in interviews whose outcomes a seed fixes, the
// list and stats agree with the events sent, pausing holds interviews back, credits run down.
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { KIND_RANKS, parseEvent, readEnvelope, type WebhookEvent } from '../../src/events/index.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { apiClient, JOB, KEY_A, person } from '../support/sandbox-api.js';
import { listen } from '../support/servers.js';

const open: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

/** A receiver that keeps every event it gets, parsed by src/events (and fails the test on any it cannot parse). */
async function collector() {
  const events: WebhookEvent[] = [];
  const invalid: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const reading = readEnvelope(Buffer.concat(chunks));
      const parsed = reading.ok ? parseEvent(reading.envelope) : undefined;
      if (parsed?.ok) events.push(parsed.event);
      else invalid.push(Buffer.concat(chunks).toString('utf8'));
      res.end('{}');
    });
  });
  const listening = await listen(server);
  open.push(listening);
  // Deliveries run several at a time: read them in the order the receiver applies them (docs/projection.md 2).
  const inOrder = () => [...events].sort((a, b) => a.timestamp.localeCompare(b.timestamp) || KIND_RANKS[a.event] - KIND_RANKS[b.event]);
  return { events, inOrder, invalid, webhookUrl: `${listening.url}/hooks` };
}

async function start(options: SandboxOptions): Promise<Sandbox> {
  const sandbox = await createSandbox({ apiKeys: [KEY_A], interviewMs: 40, retryBaseMs: 10, log: () => {}, ...options });
  open.push(sandbox);
  return sandbox;
}

/** One campaign, 8 candidates called and 4 invited by SMS. */
async function run(sandbox: Sandbox) {
  const call = apiClient(sandbox.apiUrl, KEY_A);
  const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id as string;
  await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 8 }, (_, i) => person(i)) });
  await call('POST', `/campaigns/${id}/source`, { candidates: Array.from({ length: 4 }, (_, i) => person(100 + i)) });
  await sandbox.settle(10_000);
  const list = (await call('GET', `/campaigns/${id}/candidates?per_page=100&sort=date_asc`)).body;
  const status = (await call('GET', `/campaigns/${id}/status`)).body;
  return { id, list, status, call };
}

describe('the simulated life', () => {
  it('a seed fixes identifiers and outcomes; another seed gives others', async () => {
    // Interview dates (and so the date order) depend on the clock; everything else on the seed.
    const strip = (list: { candidates: Array<Record<string, unknown>> }) =>
      list.candidates
        .map(({ interview_date: _d, ...rest }) => rest)
        .sort((a, b) => String(a.candidate_id).localeCompare(String(b.candidate_id)));
    const first = await run(await start({ seed: 'same seed' }));
    const second = await run(await start({ seed: 'same seed' }));
    const other = await run(await start({ seed: 'other seed' }));
    expect(second.id).toBe(first.id);
    expect(strip(second.list)).toEqual(strip(first.list));
    expect(second.status.stats).toEqual(first.status.stats);
    expect(other.id).not.toBe(first.id);
    const outcomes = (r: typeof first) =>
      r.list.candidates.map((c: { status: string; interview_score: number | null }) => `${c.status}:${c.interview_score}`);
    expect(outcomes(other)).not.toEqual(outcomes(first));
  });

  it('calls start and end completed or failed; invitations are sometimes taken up; list and stats agree with the events', async () => {
    const hooks = await collector();
    const sandbox = await start({ seed: 'agree', webhookUrl: hooks.webhookUrl });
    const { id, list, status } = await run(sandbox);
    expect(hooks.invalid).toEqual([]);
    const events = hooks.inOrder();
    const ofCandidate = (candidateId: string) =>
      events.filter((e) => 'candidate_id' in e.data && e.data.candidate_id === candidateId).map((e) => e.event);
    for (const c of list.candidates as Array<{
      candidate_id: string;
      status: string;
      interview_score: number | null;
      is_sourced: boolean;
    }>) {
      const kinds = ofCandidate(c.candidate_id);
      expect(kinds[0]).toBe(c.is_sourced ? 'candidate.sourced' : 'candidate.added');
      const last = events
        .filter(
          (e) =>
            'candidate_id' in e.data &&
            e.data.candidate_id === c.candidate_id &&
            e.event.startsWith('candidate.interview.') &&
            e.event !== 'candidate.interview.started',
        )
        .pop();
      if (!c.is_sourced) expect(kinds).toContain('candidate.interview.started'); // every call rings
      if (last === undefined) {
        expect(c.status).toBe('pending');
      } else if (last.event === 'candidate.interview.failed') {
        expect(c.status).toBe(last.data.failure_reason === 'voicemail' ? 'voicemail' : 'incomplete');
        expect(c.interview_score).toBeNull();
      } else {
        expect(c.status).toBe('completed');
        expect(c.interview_score).toBe((last.data as { interview_score: number }).interview_score);
        expect(c.interview_score! * 2).toBe(Math.round(c.interview_score! * 2));
      }
    }
    const completed = list.candidates.filter((c: { status: string }) => c.status === 'completed');
    expect(completed.length).toBeGreaterThan(0);
    expect(list.candidates.some((c: { status: string }) => c.status !== 'completed')).toBe(true);
    expect(status).toMatchObject({
      campaign_id: id,
      status: 'active',
      stats: {
        total_candidates: 12,
        interviews_completed: completed.length,
        average_score: completed.reduce((s: number, c: { interview_score: number }) => s + c.interview_score, 0) / completed.length,
      },
    });
    // The extended event is subscribed (all are by default): it follows each completed one, same instant, one response per question.
    const completedEvents = hooks.events.filter((e) => e.event === 'candidate.interview.completed');
    const extended = hooks.events.filter((e) => e.event === 'candidate.interview.completed.extended');
    expect(extended.map((e) => [e.data.candidate_id, e.timestamp]).sort()).toEqual(
      completedEvents.map((e) => [e.data.candidate_id, e.timestamp]).sort(),
    );
    for (const e of extended) expect((e.data as { responses: unknown[] }).responses).toHaveLength(6);
  });

  it('the extended completed event is sent only when subscribed', async () => {
    const hooks = await collector();
    const sandbox = await start({ seed: 'agree', webhookUrl: hooks.webhookUrl, events: ['candidate.interview.completed'] });
    const { list } = await run(sandbox);
    const completed = (list.candidates as Array<{ candidate_id: string; status: string }>)
      .filter((c) => c.status === 'completed')
      .map((c) => c.candidate_id);
    expect(completed.length).toBeGreaterThan(0); // the seed gives some: the next line is not vacuous
    // One completed event per completed candidate, and no extended one.
    expect(hooks.events.map((e) => [e.event, e.data.candidate_id]).sort()).toEqual(
      completed.map((id) => ['candidate.interview.completed', id]).sort(),
    );
  });

  it('a paused campaign holds its interviews until it is active again; a completed one drops them', async () => {
    const sandbox = await start({ seed: 'pause', interviewMs: 30 });
    const call = apiClient(sandbox.apiUrl, KEY_A);
    const paused = (await call('POST', '/campaigns/create', JOB)).body.campaign_id;
    const ended = (await call('POST', '/campaigns/create', JOB)).body.campaign_id;
    // Paused before the candidates come, so that no call can ring first, however slow the machine.
    for (const id of [paused, ended]) {
      await call('PATCH', `/campaigns/${id}/status`, { status: 'paused' });
      expect((await call('POST', `/campaigns/${id}/candidates`, { candidates: [person(1), person(2), person(3)] })).status).toBe(201);
    }
    await call('PATCH', `/campaigns/${ended}/status`, { status: 'completed' });
    await sandbox.settle(5000);
    const statuses = async (id: string) =>
      (await call('GET', `/campaigns/${id}/candidates`)).body.candidates.map((c: { status: string }) => c.status);
    expect(await statuses(paused)).toEqual(['pending', 'pending', 'pending']);
    expect(await statuses(ended)).toEqual(['pending', 'pending', 'pending']);
    await call('PATCH', `/campaigns/${paused}/status`, { status: 'active' });
    await sandbox.settle(5000);
    expect((await statuses(paused)).every((s: string) => s !== 'pending')).toBe(true);
    expect(await statuses(ended)).toEqual(['pending', 'pending', 'pending']);
  });

  it('credits: 1 a call, 0.25 an SMS; credits.low once below the threshold, credits.depleted at 0', async () => {
    const hooks = await collector();
    const sandbox = await start({
      seed: 'credits',
      credits: 12,
      webhookUrl: hooks.webhookUrl,
      events: ['credits.low', 'credits.depleted'],
      interviewMs: 10,
    });
    const call = apiClient(sandbox.apiUrl, KEY_A);
    const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id;
    await call('POST', `/campaigns/${id}/candidates`, { candidates: [person(1), person(2)] });
    await sandbox.settle(5000);
    expect(hooks.events).toEqual([]);
    await call('POST', `/campaigns/${id}/candidates`, { contact_mode: 'sms', candidates: [person(3), person(4), person(5), person(6)] });
    await call('POST', `/campaigns/${id}/candidates`, { candidates: [person(7)] });
    await sandbox.settle(5000);
    // 12 - 2 calls = 10 is not below the threshold; the first SMS takes it to 9.75.
    expect(hooks.events.map((e) => [e.event, e.data])).toEqual([['credits.low', { credits_remaining: 9.75, threshold: 10 }]]);
    expect((await call('GET', '/account/credits')).body).toMatchObject({ credits_available: 8, credits_used_this_month: 4 });
    await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 8 }, (_, i) => person(10 + i)) });
    await sandbox.settle(5000);
    expect(hooks.events.map((e) => [e.event, e.data])).toEqual([
      ['credits.low', { credits_remaining: 9.75, threshold: 10 }],
      ['credits.depleted', { credits_remaining: 0, last_campaign_id: id }],
    ]);
    expect((await call('GET', '/account/credits')).body).toMatchObject({ credits_available: 0, credits_used_this_month: 12 });
  });
});
