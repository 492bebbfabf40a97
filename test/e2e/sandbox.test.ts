// The real `prequal-hooks sandbox` sends to the real `prequal-hooks serve`, with duplicates,
// reordering and reserialized copies on: the receiver's projection must end equal to the
// sandbox's own candidate list, campaign stats and credits.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killChildren, readDb, runCliProcess, startSandbox, startServe } from '../support/cli-process.js';
import { apiClient, JOB, person, untilIdle } from '../support/sandbox-api.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_sandbox_e2e_8d41c7';
const KEY = `agency_live_${'k7Qm2'.repeat(8)}`;

// The list fields both sides know for every candidate (e-mail and phone reach the receiver only
// through some events: an SMS-sourced candidate's e-mail, for one, is in no event until completed).
const FIELDS = [
  'candidate_id',
  'first_name',
  'last_name',
  'status',
  'interview_score',
  'interview_date',
  'availability',
  'salary_expectation',
  'candidate_alignment',
  'strengths',
  'concerns',
] as const;
const comparable = (c: Record<string, unknown>): Record<string, unknown> => ({
  ...Object.fromEntries(FIELDS.map((f) => [f, c[f] ?? null])),
  is_sourced: Boolean(c.is_sourced),
});

describe.concurrent('prequal-hooks sandbox', () => {
  const tmp = tempDir('prequal-hooks-sandbox-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('drives a real serve through a 30-candidate campaign in mixed modes; the projection equals the sandbox', async () => {
    const dbPath = join(tmp.dir, 'e2e', 'hooks.db');
    const serve = await startServe(['--host', '127.0.0.1', '--port', '0', '--db', dbPath, '--secret', SECRET]);
    const sandbox = await startSandbox([
      '--port',
      '0',
      '--api-key',
      KEY,
      '--seed',
      'e2e-30',
      '--credits',
      '15',
      '--interview-ms',
      '400',
      '--webhook-url',
      serve.webhookUrl,
      '--webhook-secret',
      SECRET,
      '--duplicates',
      '0.3',
      '--reorder',
      '0.3',
      '--reserialize',
      '--retry-base-ms',
      '100',
    ]);
    expect(sandbox.stdout()).toContain('faults: duplicates 0.3, reorder 0.3, reserialized duplicates');
    expect(sandbox.stdout() + sandbox.stderr()).not.toContain(KEY);
    const call = apiClient(sandbox.apiUrl, KEY);

    const created = await call('POST', '/campaigns/create', JOB);
    expect(created.status).toBe(201);
    const id = created.body.campaign_id as string;
    // 12 calls (12 credits).
    const calls = await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 12 }, (_, i) => person(i)) });
    expect(calls.body).toMatchObject({ candidates_added: 12, calls_queued: 12, errors: [] });
    // Paused for a moment while calls are due: they wait, then go on.
    expect((await call('PATCH', `/campaigns/${id}/status`, { status: 'paused' })).status).toBe(200);
    // 10 SMS invitations, 2 of them with a landline and an e-mail: sent by e-mail (2 credits).
    const sms = await call('POST', `/campaigns/${id}/candidates`, {
      contact_mode: 'sms',
      candidates: Array.from({ length: 10 }, (_, i) => (i < 2 ? person(20 + i, { phone_number: `01 23 45 67 0${i}` }) : person(20 + i))),
    });
    expect(sms.body).toMatchObject({ candidates_sourced: 10, sms_sent: 8, emails_sent: 2, errors: [] });
    // Until a call comes due while paused: it leaves the sandbox's timers to wait for the campaign.
    const scheduled = async () =>
      ((await (await fetch(`${sandbox.baseUrl}/sandbox/deliveries`)).json()) as { pending: { interviews: number } }).pending.interviews;
    const atPause = await scheduled();
    await waitFor(async () => (await scheduled()) < atPause, 5000, 'a call to come due while the campaign is paused');
    expect((await call('PATCH', `/campaigns/${id}/status`, { status: 'active' })).status).toBe(200);
    // 6 e-mail invitations, 2 of them without an e-mail: sent by SMS (0.5 credit).
    const emails = await call('POST', `/campaigns/${id}/candidates`, {
      contact_mode: 'email',
      candidates: Array.from({ length: 6 }, (_, i) => (i < 2 ? { ...person(40 + i), email: undefined } : person(40 + i))),
    });
    expect(emails.body).toMatchObject({ candidates_sourced: 6, sms_sent: 2, emails_sent: 4, errors: [] });
    // 2 sourced by SMS through the source operation (0.5 credit): the balance reaches 0.
    const sourced = await call('POST', `/campaigns/${id}/source`, {
      candidates: [person(50), person(51)].map(({ phone_number, ...p }) => ({ ...p, phone: phone_number })),
    });
    expect(sourced.body).toMatchObject({ candidates_sourced: 2, sms_sent: 2 });

    await untilIdle(sandbox.baseUrl);
    expect((await call('PATCH', `/campaigns/${id}/status`, { status: 'completed' })).status).toBe(200);
    const { attempts } = await untilIdle(sandbox.baseUrl);

    // Every event was delivered (some twice), none given up; the receiver kept each once.
    const identities = new Set(attempts.map((a) => a.identity));
    expect(attempts.filter((a) => a.outcome === 'failed')).toEqual([]);
    for (const identity of identities) expect(attempts.some((a) => a.identity === identity && a.outcome === 'delivered')).toBe(true);
    expect(attempts.some((a) => a.copy === 'duplicate')).toBe(true);
    await waitFor(
      () =>
        readDb(dbPath, (db) => db.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined,
      10_000,
      'the receiver to project every event',
    );
    const inbox = readDb(dbPath, (db) => db.prepare('SELECT state, COUNT(*) AS n FROM inbox GROUP BY state').all());
    expect(inbox).toEqual([{ state: 'projected', n: identities.size }]);

    // Candidates: the sandbox's list against the receiver's table, and against its list in two orders.
    const mine = (await call('GET', `/campaigns/${id}/candidates?per_page=100&sort=score_desc`)).body;
    expect(mine.pagination.total).toBe(30);
    const statuses = new Set(mine.candidates.map((c: { status: string }) => c.status));
    expect(statuses.has('completed') && statuses.has('pending')).toBe(true);
    const rows = readDb(dbPath, (db) =>
      db.prepare('SELECT * FROM candidates WHERE campaign_id = ? ORDER BY candidate_id').all(id),
    ) as Array<Record<string, unknown>>;
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.candidate_id).localeCompare(String(b.candidate_id));
    expect(rows.map(comparable).sort(byId)).toEqual(mine.candidates.map(comparable).sort(byId));
    for (const sort of ['score_desc', 'date_desc'] as const) {
      const theirs = await runCliProcess(['inspect', '--db', dbPath, '--campaign', id, '--sort', sort, '--per-page', '100', '--json']);
      expect(theirs.code).toBe(0);
      const listed = (await call('GET', `/campaigns/${id}/candidates?per_page=100&sort=${sort}`)).body;
      expect(JSON.parse(theirs.stdout).candidates.map(comparable)).toEqual(listed.candidates.map(comparable));
    }

    // The campaign's status and stats, and the credits.
    const status = (await call('GET', `/campaigns/${id}/status`)).body;
    const state = JSON.parse((await runCliProcess(['inspect', '--db', dbPath, '--json'])).stdout);
    expect(state.campaigns).toHaveLength(1);
    expect(state.campaigns[0]).toMatchObject({ campaign_id: id, status: 'completed', job_title: JOB.job_title, stats: status.stats });
    expect(status.status).toBe('completed');
    expect(status.stats.total_candidates).toBe(30);
    const credits = (await call('GET', '/account/credits')).body;
    expect(credits).toMatchObject({ credits_available: 0, credits_used_this_month: 15 });
    expect(state.credits).toEqual({ credits_remaining: 0, low_threshold: 10, last_campaign_id: id });

    expect(await sandbox.stop()).toBe(0);
    expect(await serve.stop()).toBe(0);
  });

  it('signs with the secret of --webhook-secret-file, kept out of its arguments', async () => {
    const dbPath = join(tmp.dir, 'secret-file', 'hooks.db');
    const serve = await startServe(['--host', '127.0.0.1', '--port', '0', '--db', dbPath, '--secret', SECRET]);
    const secretFile = join(tmp.dir, 'webhook-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    const sandbox = await startSandbox(['--port', '0', '--webhook-url', serve.webhookUrl, '--webhook-secret-file', secretFile]);
    expect(sandbox.child.spawnargs.join(' ')).not.toContain(SECRET);
    expect(sandbox.stdout()).toContain(`Webhooks: POST ${serve.webhookUrl}, signed,`);
    expect(
      (
        await fetch(`${sandbox.baseUrl}/sandbox/test-event`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBeLessThan(300);
    const attempts = await waitFor(
      async () => {
        const listed = (await (await fetch(`${sandbox.baseUrl}/sandbox/deliveries`)).json()) as {
          attempts: Array<{ status: number | null }>;
        };
        return listed.attempts.length > 0 ? listed.attempts : undefined;
      },
      5000,
      "the sandbox's first delivery attempt",
    );
    expect(attempts[0]!.status).toBe(200);
    expect(await sandbox.stop()).toBe(0);
    await serve.stop();
  });

  it('generates and prints a key on stdout when none is given, answers with it, and exits 0 on SIGTERM; refuses a malformed --api-key', async () => {
    const sandbox = await startSandbox(['--port', '0']);
    expect(sandbox.generatedApiKey).toMatch(/^[A-Za-z0-9_]*live_[A-Za-z0-9_-]{32,}$/);
    // The key and the address are output a user captures (`> file`, a pipe): stdout, not stderr.
    expect(sandbox.stdout()).toMatch(/^prequal-hooks sandbox: the service's API on http:\/\/127\.0\.0\.1:\d+\/api\/v1 /);
    expect(sandbox.stdout()).toContain(`API key (generated; send it as X-API-Key): ${sandbox.generatedApiKey}\n`);
    expect(sandbox.stderr()).not.toContain(sandbox.generatedApiKey);
    expect(sandbox.stdout()).toContain('Webhooks: none sent (no --webhook-url)');
    expect((await apiClient(sandbox.apiUrl, sandbox.generatedApiKey!)('GET', '/voices')).status).toBe(200);
    expect((await apiClient(sandbox.apiUrl, `sk_live_${'x'.repeat(32)}`)('GET', '/voices')).body.error.code).toBe('INVALID_API_KEY');
    expect(await sandbox.stop()).toBe(0);

    const bad = await runCliProcess(['sandbox', '--api-key', 'live_short']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--api-key must be a prefix ending in "live_"');
    expect(bad.stderr).not.toContain('live_short');
    const events = await runCliProcess(['sandbox', '--events', 'candidate.added,candidate.hired']);
    expect(events.code).toBe(2);
    expect(events.stderr).toContain('unknown event kind "candidate.hired"');
  });
});
