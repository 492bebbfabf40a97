// The three tokens of `serve`, with the real process: each opens only its own part. The metrics
// token opens the scrape, never the console; the read-only token opens the console without
// actions or personal data; the dashboard token opens everything.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { FIXTURES, killChildren, readDb, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_serve_tokens_5c2e';
const FULL = 'full-token-3f9a1c7e5b2d';
const READ_ONLY = 'read-only-token-8e4b2a6c';
const METRICS = 'metrics-token-1d7f3b9e5a';
const CANDIDATE = 'cand-tokens-1';
const PERSONAL = { first_name: 'Gwendoline', last_name: 'Kerhervé', email: 'gwendoline.kerherve@example.org', phone: '+33612345678' };
const INVALID = readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8');

const as = (token: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${token}`, ...extra });
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' };

function revealsPersonalData(text: string): boolean {
  return Object.values(PERSONAL).some((value) => text.includes(value) || text.includes(JSON.stringify(value).slice(1, -1)));
}

describe('serve --dashboard-token, --dashboard-readonly-token and --metrics-token', () => {
  const tmp = tempDir();
  const db = () => join(tmp.dir, 'tokens.db');
  let serve: ServeProcess;
  let eventId: number;
  let deadId: number;

  beforeAll(async () => {
    serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', db(), '--secret', SECRET, '--dashboard-token', FULL], {
      PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: READ_ONLY,
      PREQUAL_HOOKS_METRICS_TOKEN: METRICS,
    });
    for (const body of [
      JSON.stringify(sampleEvent('candidate.added', { data: { campaign_id: 'cmp_tokens', candidate_id: CANDIDATE, ...PERSONAL } })),
      INVALID,
    ]) {
      const request = signedRequest(body, { secret: SECRET });
      expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    }
    await waitFor(
      () =>
        readDb(db(), (d) => d.prepare("SELECT COUNT(*) AS n FROM inbox WHERE state != 'pending'").pluck().get()) === 2 ? true : undefined,
      5000,
      'both events processed',
    );
    [eventId, deadId] = readDb(
      db(),
      (d) => d.prepare("SELECT inbox_id FROM inbox ORDER BY state = 'dead', inbox_id").pluck().all() as number[],
    ) as [number, number];
  });
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  const get = async (path: string, token: string) => {
    const answer = await fetch(`${serve.baseUrl}${path}`, { headers: as(token) });
    return { status: answer.status, text: await answer.text() };
  };
  const code = (text: string) => (JSON.parse(text) as { error: { code: string } }).error.code;

  it('the metrics token opens GET /metrics and nothing else', async () => {
    const metrics = await get('/metrics', METRICS);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('prequal_hooks_requests_total');
    for (const path of [
      '/dashboard',
      '/dashboard/',
      '/dashboard/events',
      `/dashboard/candidates/${CANDIDATE}?reveal=1`,
      `/dashboard/candidates/${CANDIDATE}/export`,
      '/dashboard/api/overview',
    ]) {
      const refused = await get(path, METRICS);
      expect(refused.status, path).toBe(403);
      expect(code(refused.text)).toBe('FORBIDDEN');
      expect(revealsPersonalData(refused.text)).toBe(false);
    }
    const post = await fetch(`${serve.baseUrl}/dashboard/dead-letters/${deadId}/reprocess`, {
      method: 'POST',
      headers: as(METRICS, FORM),
      body: '',
    });
    expect(post.status).toBe(403);
  });

  it('the read-only token opens the console to read, with personal data masked even when asked, and refuses actions 403', async () => {
    for (const path of [
      '/dashboard/',
      '/dashboard/events',
      `/dashboard/events/${eventId}?reveal=1`,
      '/dashboard/campaigns/cmp_tokens?reveal=1',
      `/dashboard/candidates/${CANDIDATE}?reveal=1`,
      '/dashboard/dead-letters',
      '/dashboard/api/events',
    ]) {
      const page = await get(path, READ_ONLY);
      expect(page.status, path).toBe(200);
      expect(revealsPersonalData(page.text), path).toBe(false);
      expect(page.text).not.toContain('id="reveal"');
      expect(page.text).not.toContain('name="_csrf"');
    }
    expect((await get(`/dashboard/candidates/${CANDIDATE}`, READ_ONLY)).text).toContain('G*** K***');
    const exported = await get(`/dashboard/candidates/${CANDIDATE}/export`, READ_ONLY);
    expect(exported.status).toBe(403);
    expect(revealsPersonalData(exported.text)).toBe(false);

    const post = await fetch(`${serve.baseUrl}/dashboard/dead-letters/${deadId}/reprocess`, {
      method: 'POST',
      headers: as(READ_ONLY, FORM),
      body: '',
    });
    expect(post.status).toBe(403);
    expect(code(await post.text())).toBe('FORBIDDEN');
    const erase = await fetch(`${serve.baseUrl}/dashboard/candidates/${CANDIDATE}/erase`, {
      method: 'POST',
      headers: as(READ_ONLY, FORM),
      body: `reason=x&confirm=${CANDIDATE}`,
    });
    expect(erase.status).toBe(403);
    expect(readDb(db(), (d) => d.prepare('SELECT state FROM inbox WHERE inbox_id = ?').pluck().get(deadId))).toBe('dead');

    const metrics = await get('/metrics', READ_ONLY);
    expect(metrics.status).toBe(403);
    expect(code(metrics.text)).toBe('FORBIDDEN');
  });

  it('the dashboard token opens everything: /metrics, personal data when revealed, the export and the actions', async () => {
    expect((await get('/metrics', FULL)).status).toBe(200);
    const revealed = await get(`/dashboard/candidates/${CANDIDATE}?reveal=1`, FULL);
    expect(revealed.status).toBe(200);
    expect(revealed.text).toContain(PERSONAL.email);
    const exported = await get(`/dashboard/candidates/${CANDIDATE}/export`, FULL);
    expect(exported.status).toBe(200);
    expect(exported.text).toContain(PERSONAL.phone);

    const page = await get('/dashboard/dead-letters', FULL);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const post = await fetch(`${serve.baseUrl}/dashboard/dead-letters/${deadId}/reprocess`, {
      method: 'POST',
      headers: as(FULL, FORM),
      body: `_csrf=${csrf}`,
      redirect: 'manual',
    });
    expect(post.status).toBe(303);
  });

  it('/readyz says ready or not, and nothing of the inbox, to anyone: with no token as with each of them', async () => {
    for (const headers of [{}, as(FULL), as(READ_ONLY), as(METRICS), as('not-a-token-of-ours-at-all')]) {
      const ready = await fetch(`${serve.baseUrl}/readyz`, { headers });
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
    }
  });

  it('anything else is 401 with the Basic challenge, and no token ever reaches the logs', async () => {
    for (const path of ['/metrics', '/dashboard/', '/dashboard/events']) {
      for (const headers of [{}, as('not-a-token-of-ours-at-all')]) {
        const refused = await fetch(`${serve.baseUrl}${path}`, { headers });
        expect(refused.status, path).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      }
    }
    const output = serve.stdout() + serve.stderr();
    for (const token of [FULL, READ_ONLY, METRICS]) expect(output).not.toContain(token);
  });

  it('serves only the parts that have a token: the metrics token alone serves no console, the read-only token alone no /metrics', async () => {
    const metricsOnly = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'metrics-only.db'),
      '--secret',
      SECRET,
      '--metrics-token',
      METRICS,
    ]);
    expect((await fetch(`${metricsOnly.baseUrl}/metrics`, { headers: as(METRICS) })).status).toBe(200);
    expect((await fetch(`${metricsOnly.baseUrl}/dashboard/`, { headers: as(METRICS) })).status).toBe(404);
    expect(await metricsOnly.stop()).toBe(0);

    const readOnlyOnly = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'read-only-only.db'),
      '--secret',
      SECRET,
      '--dashboard-readonly-token',
      READ_ONLY,
    ]);
    expect((await fetch(`${readOnlyOnly.baseUrl}/dashboard/`, { headers: as(READ_ONLY) })).status).toBe(200);
    expect((await fetch(`${readOnlyOnly.baseUrl}/dashboard/`)).status).toBe(401);
    expect((await fetch(`${readOnlyOnly.baseUrl}/metrics`, { headers: as(READ_ONLY) })).status).toBe(404);
    expect(await readOnlyOnly.stop()).toBe(0);
  });

  it('refuses a token under 16 characters, or one value for two tokens, naming the flag or variable; --print-config masks them', async () => {
    const short = await runCliProcess(['serve', '--print-config', '--metrics-token', 'short-metrics']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/--metrics-token must be at least 16 characters/);
    expect(short.stderr).not.toContain('short-metrics');
    const shortEnv = await runCliProcess(['serve', '--print-config'], {
      env: { PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: 'short-readonly' },
    });
    expect(shortEnv.code).toBe(2);
    expect(shortEnv.stderr).toMatch(/PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN must be at least 16 characters/);
    const same = await runCliProcess(['serve', '--print-config', '--dashboard-token', FULL], {
      env: { PREQUAL_HOOKS_METRICS_TOKEN: FULL },
    });
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--dashboard-token and PREQUAL_HOOKS_METRICS_TOKEN must differ/);
    expect(same.stderr).not.toContain(FULL);

    const dump = await runCliProcess(['serve', '--print-config', '--dashboard-readonly-token', READ_ONLY, '--metrics-token', METRICS]);
    expect(dump.code).toBe(0);
    expect(dump.stdout).not.toContain(READ_ONLY);
    expect(dump.stdout).not.toContain(METRICS);
    const config = JSON.parse(dump.stdout) as Record<string, { from: string }>;
    expect(config['metrics-token']!.from).toBe('--metrics-token');
    expect(config['dashboard-readonly-token']!.from).toBe('--dashboard-readonly-token');
  });
});
