import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe } from '../support/cli-process.js';
import { needs } from '../support/needs.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_serve_metrics_9a1c';
const TOKEN = 'dash-8f3e1c2d9b7a';
const METRICS_TOKEN = 'scrape-4b8d2f6a1c9e';

// promtool (Debian's prometheus package; .ci/run installs it) lints the exposition: names, unit
// suffixes, _total on counters only, help text. Absent, its test says so loudly and is skipped
// (fails under CI=true).
const PROMTOOL = needs('promtool', spawnSync('promtool', ['--version']).status === 0, {
  install: "`apt-get install -y prometheus` (Debian's package holding it; .ci/run installs it)",
  untested: '`promtool check metrics` on /metrics',
});

/** One series' value from a scrape, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics of prequal-hooks serve', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('answers the Prometheus text to Bearer and Basic holders of the token, 401 in the envelope otherwise, and never logs the token', async () => {
    const serve = await startServe(
      ['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'm.db'), '--secret', SECRET, '--log-level', 'info'],
      { PREQUAL_HOOKS_DASHBOARD_TOKEN: TOKEN },
    );
    const request = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: {}, body: request.body })).status).toBe(401);

    const bearer = await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await bearer.text();
    expect(text).toMatch(/prequal_hooks_requests_total\{account="default",status="200",outcome="stored"\} 1/);
    expect(text).toMatch(/prequal_hooks_requests_total\{account="default",status="401",outcome="refused"\} 1/);
    expect(text).toMatch(/prequal_hooks_storage_up 1/);

    const basic = await fetch(`${serve.baseUrl}/metrics`, {
      headers: { Authorization: `Basic ${Buffer.from(`ops:${TOKEN}`).toString('base64')}` },
    });
    expect(basic.status).toBe(200);

    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer wrong' },
      { Authorization: `Basic ${Buffer.from('ops:wrong').toString('base64')}` },
    ];
    for (const headers of attempts) {
      const refused = await fetch(`${serve.baseUrl}/metrics`, { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout() + serve.stderr()).not.toContain(TOKEN);
  });

  it('is not served at all without a token', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'n.db'), '--secret', SECRET]);
    const response = await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: 'Bearer anything' } });
    expect(response.status).toBe(404);
    expect(await serve.stop()).toBe(0);
  });

  it("measures the time to acknowledge each webhook against the sender's 5 s, and the backlog's age, with sane values under load", async () => {
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'load.db'),
      '--secret',
      SECRET,
      '--metrics-token',
      METRICS_TOKEN,
      '--log-level',
      'warn',
    ]);
    const scrape = async () => (await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const before = await scrape();
    expect(sample(before, 'prequal_hooks_backlog_age_seconds{account="default"}')).toBe(0);

    const SENT = 240;
    const ages: number[] = [];
    let next = 0;
    const sender = async () => {
      while (next < SENT) {
        const i = next++;
        const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `cand-load-${i}` } }), { secret: SECRET });
        expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
      }
    };
    const scraper = async () => {
      while (next < SENT) {
        const age = sample(await scrape(), 'prequal_hooks_backlog_age_seconds{account="default"}');
        expect(age, 'the backlog age is in every scrape').toBeDefined();
        ages.push(age!);
      }
    };
    await Promise.all([...Array.from({ length: 16 }, sender), scraper()]);
    expect(ages.length).toBeGreaterThan(0);
    for (const age of ages) {
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(30);
    }
    // Drained: nothing pending, so an age of 0.
    const after = await waitFor(
      async () => {
        const scraped = await scrape();
        return sample(scraped, 'prequal_hooks_backlog_age_seconds{account="default"}') === 0 && scraped;
      },
      5000,
      'a backlog age of 0',
      { everyMs: 100 },
    );
    expect(sample(after, 'prequal_hooks_backlog_age_seconds{account="default"}')).toBe(0);

    const count = sample(after, 'prequal_hooks_webhook_ack_seconds_count{outcome="stored"}');
    expect(count).toBe(SENT);
    expect(sample(after, 'prequal_hooks_webhook_ack_seconds_bucket{le="5",outcome="stored"}')).toBe(SENT);
    const seconds = sample(after, 'prequal_hooks_webhook_ack_seconds_sum{outcome="stored"}')!;
    expect(seconds).toBeGreaterThan(0);
    expect(seconds / SENT).toBeLessThan(5);
    // Buckets dense around the 5 s budget, so an operator sees answers coming close to it.
    const bounds = [...after.matchAll(/^prequal_hooks_webhook_ack_seconds_bucket\{le="([^"]+)",outcome="stored"\}/gm)].map((m) => m[1]);
    expect(bounds).toEqual(expect.arrayContaining(['1', '2', '3', '4', '5', '7.5', '10', '+Inf']));
    expect(await serve.stop()).toBe(0);
  });

  it.skipIf(!PROMTOOL)("passes `promtool check metrics` as served: every series, prom-client's process defaults included", async () => {
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'lint.db'),
      '--secret',
      SECRET,
      '--dashboard-token',
      TOKEN,
    ]);
    const request = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);
    expect((await fetch(serve.webhookUrl, { method: 'POST', headers: {}, body: request.body })).status).toBe(401);
    const text = await (await fetch(`${serve.baseUrl}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    expect(text).toContain('prequal_hooks_webhook_ack_seconds_bucket');
    expect(text).toContain('prequal_hooks_backlog_age_seconds{account="default"}');
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${lint.stdout}${lint.stderr}`).toBe('');
    expect(lint.status).toBe(0);
    // The per-type gauges stay: their sum is what the dropped *_total gauges said.
    expect(text).toMatch(/^prequal_hooks_nodejs_active_handles\{type="[A-Za-z]+"\} \d+$/m);
    expect(text).not.toMatch(/^prequal_hooks_nodejs_active_\w+_total/m);
    expect(await serve.stop()).toBe(0);
  });
});
