// The console's Destinations page and the destination series of /metrics, as an operator meets
// them: `prequal-hooks serve` delivering to a receiver on loopback that answers 500, then 200. The
// page shows the destination (its URL masked), its lag and its dead delivery; Retry from the page
// (full token, CSRF) makes the change due again and it is delivered; the read-only token sees the
// page masked alike, without the actions, and its POST is refused (403). The metrics count the
// deliveries by destination id and outcome, never by URL, and pass `promtool check metrics`.
import { spawnSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEvent } from '../../src/testing/samples.js';
import { sendSigned } from '../../src/testing/signed-request.js';
import { killChildren, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { findExecutable, needs } from '../support/needs.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_console-destinations-7c2e9a';
const TOKEN = 'console-destinations-full-4d1b';
const READ_ONLY = 'console-destinations-ro-8e3f';
const PASSWORD = 'dst-Pa55-console-9a1c';
const QUERY_KEY = 'qkey-console-5b7d';
const HEADER_VALUE = 'hdr-console-secret-2f8a';

const CHROMIUM = findExecutable(['chromium', 'chromium-browser'], { override: process.env.CHROMIUM_PATH });
const HAS_CHROMIUM = needs('Chromium', CHROMIUM !== undefined, {
  install: '`apt-get install -y chromium` (.ci/run does), or put it on PATH, or set CHROMIUM_PATH',
  untested: "the Destinations page's Retry in a browser",
});
const PROMTOOL = needs('promtool', spawnSync('promtool', ['--version']).status === 0, {
  install: "`apt-get install -y prometheus` (Debian's package holding it; .ci/run installs it)",
  untested: '`promtool check metrics` with the destination series',
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** One series' value from a scrape, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the Destinations page and the destination metrics of serve', () => {
  const tmp = tempDir('prequal-hooks-console-destinations-');
  const received: Array<{ seq: number; status: number }> = [];
  let status = 500;
  let target: { url: string; close: () => Promise<void> };
  let serve: ServeProcess;
  let destination = '';
  let sent = 0;

  const metrics = async () => await (await fetch(`${serve.baseUrl}/metrics`, { headers: bearer(TOKEN) })).text();
  const series = (name: string, labels: string) => `prequal_hooks_${name}{account="default",destination="${destination}"${labels}}`;
  const page = async (token: string) => {
    const answer = await fetch(`${serve.baseUrl}/dashboard/destinations`, { headers: bearer(token) });
    expect(answer.status).toBe(200);
    return await answer.text();
  };
  /** Sends a change for the destination while the receiver answers 500, and waits for it to be dead. */
  const deadChange = async (dead: number) => {
    status = 500;
    const event = sampleEvent('candidate.added', { data: { candidate_id: `cand-dst-${++sent}` } });
    expect((await sendSigned(serve.webhookUrl, event, { secret: SECRET })).status).toBe(200);
    await waitFor(async () => sample(await metrics(), series('destination_dead_deliveries', '')) === dead, 10_000, 'the change set aside');
    return received.at(-1)!.seq;
  };

  beforeAll(async () => {
    target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      for await (const chunk of req) raw += String(chunk);
      received.push({ seq: (JSON.parse(raw) as { seq: number }).seq, status });
      res.writeHead(status).end();
    });
    const db = tmp.dbPath;
    expect((await runCliProcess(['migrate', '--db', db])).code).toBe(0);
    const url = `${target.url.replace('http://', `http://hooks:${PASSWORD}@`)}/in?key=${QUERY_KEY}`;
    const added = await runCliProcess([
      'destinations',
      'add',
      '--db',
      db,
      '--url',
      url,
      '--filter',
      'entity=candidate',
      '--retry-schedule',
      '0s,100ms',
      '--header',
      `X-Api-Key: ${HEADER_VALUE}`,
      '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    destination = (JSON.parse(added.stdout) as { destination: string }).destination;
    serve = await startServe(['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', SECRET], {
      PREQUAL_HOOKS_DASHBOARD_TOKEN: TOKEN,
      PREQUAL_HOOKS_DASHBOARD_READONLY_TOKEN: READ_ONLY,
    });
  });
  afterAll(async () => {
    await serve?.stop('SIGTERM');
    await target?.close();
    killChildren();
    tmp.cleanup();
  });

  it('shows a dead delivery with its Retry; Retry (full token, CSRF) delivers it; read-only sees it masked and gets 403', async () => {
    const seq = await deadChange(1);
    const full = await page(TOKEN);
    const masked = `${target.url.replace('http://', 'http://***@')}/in?key=***`;
    for (const text of [full, await page(READ_ONLY)]) {
      expect(text).toContain(`data-destination="${destination}"`);
      expect(text).toContain(masked);
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(QUERY_KEY);
      // Its kind and how it authenticates, by names only: the header's value stays sealed.
      expect(text).toContain('<dd class="type">http</dd>');
      expect(text).toMatch(/<dd class="auth">signed v1 · user info · headers X-Api-Key<\/dd>/);
      expect(text).not.toContain(HEADER_VALUE);
      expect(text).toMatch(
        new RegExp(`<tr data-seq="${seq}"><td>${seq}</td><td>candidate <code>cand-dst-1</code></td><td>2</td><td>500</td>`),
      );
      expect(text).toContain('<dd class="dead-count">1</dd>');
      // Its one change is dead: nothing is queued, no attempt is due.
      expect(text).toContain('<dd class="next-attempt">—</dd>');
      expect(text).toContain('answered 500');
    }
    expect(full).toContain('Retry all 1');
    const readOnly = await page(READ_ONLY);
    expect(readOnly).not.toContain('<form');
    expect(readOnly).not.toContain('Retry');

    const action = `${serve.baseUrl}/dashboard/destinations/${destination}/retry`;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(full)![1]!;
    const post = (token: string, form: Record<string, string>) =>
      fetch(action, { method: 'POST', headers: bearer(token), body: new URLSearchParams(form), redirect: 'manual' });
    expect((await post(READ_ONLY, { _csrf: csrf, seq: String(seq) })).status).toBe(403);
    expect((await post(TOKEN, { seq: String(seq) })).status).toBe(403);
    expect(sample(await metrics(), series('destination_dead_deliveries', ''))).toBe(1);

    status = 200;
    const retried = await post(TOKEN, { _csrf: csrf, seq: String(seq) });
    expect(retried.status).toBe(303);
    expect(retried.headers.get('location')).toBe('/dashboard/destinations?retried=1');
    await waitFor(() => received.some((r) => r.seq === seq && r.status === 200), 5000, 'the retried change delivered');
    const after = await page(TOKEN);
    expect(after).toContain('<dd class="dead-count">0</dd>');
    expect(after).toContain('No dead delivery.');

    const text = await waitFor(
      async () => {
        const scraped = await metrics();
        return sample(scraped, series('destination_deliveries_total', ',outcome="delivered"')) === 1 && scraped;
      },
      5000,
      'the delivery counted',
    );
    expect(sample(text, series('destination_deliveries_total', ',outcome="failed"'))).toBe(1);
    expect(sample(text, series('destination_deliveries_total', ',outcome="dead"'))).toBe(1);
    expect(sample(text, series('destination_dead_deliveries', ''))).toBe(0);
    expect(sample(text, series('destination_lag_seconds', ''))).toBe(0);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('127.0.0.1');
  });

  it('Retry all sends every dead change again', async () => {
    const seq = await deadChange(1);
    status = 200;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page(TOKEN))![1]!;
    const all = await fetch(`${serve.baseUrl}/dashboard/destinations/${destination}/retry`, {
      method: 'POST',
      headers: bearer(TOKEN),
      body: new URLSearchParams({ _csrf: csrf }),
      redirect: 'manual',
    });
    expect(all.status).toBe(303);
    await waitFor(() => received.some((r) => r.seq === seq && r.status === 200), 5000, 'the change retried by Retry all delivered');
  });

  it('shows the changes held behind a disabled destination and their age, in the page and the gauge', async () => {
    const destinations = (verb: string) => runCliProcess(['destinations', verb, '--db', tmp.dbPath, '--destination', destination]);
    expect((await destinations('disable')).code).toBe(0);
    await waitFor(
      async () => (await page(TOKEN)).includes('<span class="state disabled">disabled</span>'),
      5000,
      'the page showing it disabled',
    );
    const event = sampleEvent('candidate.added', { data: { candidate_id: `cand-dst-${++sent}` } });
    expect((await sendSigned(serve.webhookUrl, event, { secret: SECRET })).status).toBe(200);
    await waitFor(async () => (await page(TOKEN)).includes('<span class="lag-changes">1</span> change behind'), 5000, 'the lag shown');
    const lag = await waitFor(
      async () => {
        const seconds = sample(await metrics(), series('destination_lag_seconds', ''));
        return seconds !== undefined && seconds > 0 && seconds;
      },
      5000,
      'a lag in seconds',
    );
    expect(lag).toBeLessThan(60);
    status = 200;
    expect((await destinations('enable')).code).toBe(0);
    await waitFor(async () => sample(await metrics(), series('destination_lag_seconds', '')) === 0, 5000, 'the lag back to 0');
  });

  it.skipIf(!HAS_CHROMIUM)('in Chromium: the page is styled, and its Retry button sends the dead change again', async () => {
    const seq = await deadChange(1);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    try {
      const context = await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } });
      const tab = await context.newPage();
      const failed: string[] = [];
      tab.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.url()}: ${response.status()}`);
      });
      tab.on('pageerror', (error) => failed.push(error.message));
      await tab.goto(`${serve.baseUrl}/dashboard/destinations`);
      expect(await tab.title()).toBe('Destinations · prequal-hooks');
      expect(await tab.evaluate<string>(`getComputedStyle(document.querySelector('header')).backgroundColor`)).toBe('rgb(29, 35, 48)');
      expect(await tab.locator('nav a[aria-current="page"]').textContent()).toBe('Destinations');
      status = 200;
      await tab.click(`tr[data-seq="${seq}"] button`);
      await tab.waitForURL(`${serve.baseUrl}/dashboard/destinations?retried=1`);
      expect(await tab.locator('#notice').textContent()).toBe('1 dead delivery queued again.');
      await waitFor(() => received.some((r) => r.seq === seq && r.status === 200), 5000, 'the change retried from the browser delivered');
      expect(failed).toEqual([]);
      await context.close();
    } finally {
      await browser.close();
    }
  });

  it.skipIf(!PROMTOOL)('passes `promtool check metrics` with the destination series', async () => {
    const text = await metrics();
    expect(text).toContain('prequal_hooks_destination_deliveries_total');
    expect(text).toContain('prequal_hooks_destination_lag_seconds');
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${lint.stdout}${lint.stderr}`).toBe('');
    expect(lint.status).toBe(0);
  });
});
