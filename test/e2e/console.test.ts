// The operator console: over plain HTTP (auth, headers, CSRF, read-only) always; in Debian's
// Chromium (playwright-core) when it is installed, against a real `prequal-hooks serve` and an
// Express app mounting receiver.dashboard().
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/console/headers.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { FIXTURES, killChildren, readDb, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { crawlConsole, withReveal } from '../support/console-crawl.js';
import {
  INVALID_EVENT,
  LARGE_NOT_JSON,
  largeEvent,
  leaked,
  NOT_JSON,
  THESSALY,
  UNKNOWN_KIND_EVENT,
  ZELPHINE,
  ZELPHINE_EVENTS,
} from '../support/personal-bodies.js';
import { findExecutable, needs } from '../support/needs.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { received } from '../support/bodies.js';

const SECRET = 'whsec_console_e2e_41b7';
const TOKEN = 'console-token-7d1f9a2c4e6b';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const LIFECYCLE = readFileSync(`${FIXTURES}scenarios/campaign-lifecycle.ndjson`, 'utf8').trim().split('\n');
const UNKNOWN = readFileSync(`${FIXTURES}invalid/unknown-kind.json`, 'utf8');
const INVALID = readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8');
const RK4 = 'cmp_Rk4vN8qWz2';
const ELOISE = 'f332892f-d38e-44df-8ebf-7c9f49065885';

const CHROMIUM = findExecutable(['chromium', 'chromium-browser'], { override: process.env.CHROMIUM_PATH });
const HAS_CHROMIUM = needs('Chromium', CHROMIUM !== undefined, {
  install: '`apt-get install -y chromium` (.ci/run does), or put it on PATH, or set CHROMIUM_PATH',
  untested: "the console's browser tests",
});

/** Posts each body signed to the default account's path, or to another account's (`to`). */
async function feed(serve: ServeProcess, bodies: string[], to = { url: serve.webhookUrl, secret: SECRET }): Promise<void> {
  for (const body of bodies) {
    const request = signedRequest(body, { secret: to.secret });
    const answer = await fetch(to.url, { method: 'POST', headers: request.headers, body: request.body });
    // A body that is not JSON is answered 400, and still kept as a dead letter.
    expect(answer.status).toBe(body.startsWith('{') ? 200 : 400);
  }
}

function inboxCounts(dbPath: string): Record<string, number> {
  return readDb(dbPath, (db) =>
    Object.fromEntries(
      (db.prepare('SELECT state, COUNT(*) AS n FROM inbox GROUP BY state').all() as Array<{ state: string; n: number }>).map((r) => [
        r.state,
        r.n,
      ]),
    ),
  );
}

describe('the console over HTTP', () => {
  const tmp = tempDir();
  let serve: ServeProcess;
  let readOnly: { url: string; close: () => Promise<void> };
  let readOnlyReceiver: Receiver;
  beforeAll(async () => {
    serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', tmp.dbPath, '--secret', SECRET, '--dashboard-token', TOKEN]);
    await feed(serve, [INVALID]);
    readOnlyReceiver = createReceiver({ database: join(tmp.dir, 'ro.db'), secret: SECRET });
    const app = express();
    app.use('/ops', readOnlyReceiver.dashboard({ token: TOKEN, readOnly: true }));
    readOnly = await listen(app as never);
  });
  afterAll(async () => {
    await serve.stop();
    await readOnly.close();
    await readOnlyReceiver.close();
    killChildren();
    tmp.cleanup();
  });

  it('answers 401 with the Basic challenge and the envelope without the token, and serves Bearer and Basic holders', async () => {
    for (const headers of [
      {},
      { Authorization: 'Bearer wrong-token-0000000000' },
      { Authorization: `Basic ${Buffer.from('ops:wrong').toString('base64')}` },
    ] as Array<Record<string, string>>) {
      const refused = await fetch(`${serve.baseUrl}/dashboard/`, { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Basic realm="prequal-hooks"');
      expect(refused.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      const body = (await refused.json()) as { error: { code: string; message: string; details: unknown } };
      expect(body.error).toMatchObject({ code: 'UNAUTHORIZED', details: {} });
    }
    expect((await fetch(`${serve.baseUrl}/dashboard`, { headers: BEARER })).status).toBe(200);
    const basic = await fetch(`${serve.baseUrl}/dashboard/events`, {
      headers: { Authorization: `Basic ${Buffer.from(`anyone:${TOKEN}`).toString('base64')}` },
    });
    expect(basic.status).toBe(200);
    expect(await basic.text()).toContain('candidate.interview.completed');
  });

  it('sends the strict CSP and the other headers on pages, data and assets, with no inline script or style', async () => {
    for (const path of ['/', '/events', '/api/overview', '/assets/console.js', '/assets/uPlot.iife.min.js', '/assets/uPlot.min.css']) {
      const answer = await fetch(`${serve.baseUrl}/dashboard${path}`, { headers: BEARER });
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.headers.get('cache-control')).toBe('no-store');
      const text = await answer.text();
      if (path === '/' || path === '/events') {
        expect(text).not.toMatch(/<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i);
        expect(text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from a CDN
      }
    }
  });

  it('answers 404, not 500, for an asset named like a member of every object', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'nothing.js']) {
      const answer = await fetch(`${serve.baseUrl}/dashboard/assets/${name}`, { headers: BEARER });
      expect(answer.status, name).toBe(404);
      expect(((await answer.json()) as { error: { code: string } }).error.code, name).toBe('RESOURCE_NOT_FOUND');
    }
    expect((await fetch(`${serve.baseUrl}/dashboard/assets/console.css`, { headers: BEARER })).status).toBe(200);
  });

  it("refuses actions without the form's CSRF token or from another site (403), and does nothing", async () => {
    const [row] = readDb(
      tmp.dbPath,
      (db) => db.prepare("SELECT inbox_id FROM inbox WHERE state = 'dead'").all() as Array<{ inbox_id: number }>,
    );
    const url = `${serve.baseUrl}/dashboard/dead-letters/${row!.inbox_id}/reprocess`;
    const form = { ...BEARER, 'Content-Type': 'application/x-www-form-urlencoded' };
    const noToken = await fetch(url, { method: 'POST', headers: form, body: '', redirect: 'manual' });
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { error: { code: string } }).error.code).toBe('CSRF_REFUSED');
    const page = await (await fetch(`${serve.baseUrl}/dashboard/dead-letters`, { headers: BEARER })).text();
    const token = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const crossSite = await fetch(url, {
      method: 'POST',
      headers: { ...form, 'Sec-Fetch-Site': 'cross-site' },
      body: `_csrf=${token}`,
      redirect: 'manual',
    });
    expect(crossSite.status).toBe(403);
    const otherOrigin = await fetch(url, {
      method: 'POST',
      headers: { ...form, Origin: 'https://evil.example' },
      body: `_csrf=${token}`,
      redirect: 'manual',
    });
    expect(otherOrigin.status).toBe(403);
    expect(inboxCounts(tmp.dbPath).dead).toBe(1);
    const sameOrigin = await fetch(url, {
      method: 'POST',
      headers: { ...form, 'Sec-Fetch-Site': 'same-origin' },
      body: `_csrf=${token}`,
      redirect: 'manual',
    });
    expect(sameOrigin.status).toBe(303);
    expect(sameOrigin.headers.get('location')).toMatch(/^\/dashboard\/dead-letters\?requeued=1/);
  });

  it('escapes what senders wrote, even revealed: a hostile name is shown as text, never run', async () => {
    const hostile = sampleEvent('candidate.added', {
      data: { candidate_id: 'cand-xss', first_name: '<script>alert(1)</script>', last_name: '"><img src=x onerror=alert(2)>' },
    });
    await feed(serve, [JSON.stringify(hostile)]);
    await waitFor(() => (inboxCounts(tmp.dbPath).pending ?? 0) === 0, 10_000, 'the projection');
    for (const path of ['/candidates/cand-xss?reveal=1', `/campaigns/${hostile.data.campaign_id}?reveal=1`, '/events?candidate=cand-xss']) {
      const text = await (await fetch(`${serve.baseUrl}/dashboard${path}`, { headers: BEARER })).text();
      expect(text, path).not.toContain('<script>alert');
      expect(text, path).not.toContain('<img src=x');
    }
    const page = await (await fetch(`${serve.baseUrl}/dashboard/candidates/cand-xss?reveal=1`, { headers: BEARER })).text();
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const [row] = readDb(tmp.dbPath, (db) =>
      (db.prepare('SELECT inbox_id, raw, codec FROM inbox').all() as Array<{ inbox_id: number; raw: Buffer; codec: number | null }>).filter(
        (r) => received(r).toString('utf8').includes('cand-xss'),
      ),
    );
    const detail = await (await fetch(`${serve.baseUrl}/dashboard/events/${row!.inbox_id}?reveal=1`, { headers: BEARER })).text();
    expect(detail).toContain('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
  });

  it('in read-only mode hides the actions and answers their POSTs 403', async () => {
    const page = await fetch(`${readOnly.url}/ops/dead-letters`, { headers: BEARER });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('read-only');
    expect(text).not.toContain('method="post"');
    const post = await fetch(`${readOnly.url}/ops/dead-letters/reprocess`, {
      method: 'POST',
      headers: { ...BEARER, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'state=dead',
    });
    expect(post.status).toBe(403);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    // A method the console has no use for stays 405.
    expect((await fetch(`${readOnly.url}/ops/dead-letters/reprocess`, { method: 'DELETE', headers: BEARER })).status).toBe(405);
    // Authentication still comes first.
    expect((await fetch(`${readOnly.url}/ops/dead-letters/reprocess`, { method: 'POST' })).status).toBe(401);
  });

  it('is never made without a token of 16 characters or more', async () => {
    expect(() => readOnlyReceiver.dashboard({ token: '' })).toThrow(/needs a token/);
    expect(() => readOnlyReceiver.dashboard({} as never)).toThrow(/needs a token/);
    expect(() => readOnlyReceiver.dashboard({ token: 'short' })).toThrow(/at least 16/);
    const refused = await runCliProcess([
      'serve',
      '--port',
      '0',
      '--db',
      join(tmp.dir, 'short.db'),
      '--secret',
      SECRET,
      '--dashboard-token',
      'short',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/at least 16 characters/);
    expect(refused.stderr).not.toContain('short.db'.repeat(2));
  });

  it('is not served when serve has no token', async () => {
    const open = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'open.db'), '--secret', SECRET]);
    expect((await fetch(`${open.baseUrl}/dashboard`, { headers: BEARER })).status).toBe(404);
    await open.stop();
  });
});

describe("personal data in free text, to a real serve's read-only and full tokens, in two accounts", () => {
  const READ_ONLY = 'console-read-only-token-5c2e';
  const ACME_SECRET = 'whsec_console_e2e_acme_93d0';
  const tmp = tempDir();
  let serve: ServeProcess;
  let dashboard: string;
  let acmePath: string;
  beforeAll(async () => {
    // A second account, whose events are the same people's: its pages are crawled as the default's.
    const added = await runCliProcess(['accounts', 'add', '--db', tmp.dbPath, '--account', 'acme', '--secret', ACME_SECRET, '--json']);
    expect(added.code, added.stderr).toBe(0);
    acmePath = (JSON.parse(added.stdout) as { webhookPath: string }).webhookPath;
    serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      tmp.dbPath,
      '--secret',
      SECRET,
      '--dashboard-token',
      TOKEN,
      '--dashboard-readonly-token',
      READ_ONLY,
    ]);
    dashboard = `${serve.baseUrl}/dashboard`;
    await feed(serve, [
      ...[...ZELPHINE_EVENTS, INVALID_EVENT, UNKNOWN_KIND_EVENT, largeEvent()].map((e) => JSON.stringify(e)),
      NOT_JSON,
      LARGE_NOT_JSON,
    ]);
    await feed(
      serve,
      [...ZELPHINE_EVENTS, INVALID_EVENT, UNKNOWN_KIND_EVENT].map((e) => JSON.stringify(e)),
      { url: `${serve.baseUrl}${acmePath}`, secret: ACME_SECRET },
    );
    await waitFor(() => (inboxCounts(tmp.dbPath).pending ?? 0) === 0, 10_000, 'the projection');
  });
  afterAll(async () => {
    await serve.stop();
    killChildren();
    tmp.cleanup();
  });
  const leaks = (answers: Array<{ path: string; status: number; text: string }>) =>
    answers.flatMap((a) => [
      ...leaked(a.text).map((secret) => `${a.path}: ${secret}`),
      ...(a.status >= 500 ? [`${a.path}: ${a.status}`] : []),
    ]);
  // The event pages found: the switcher also leads from each to the other account's page of that id, which is not found there.
  const found = (crawled: Array<{ path: string; status: number }>, path: RegExp) =>
    crawled.filter((a) => a.status === 200 && path.test(a.path));
  const extra = [`/candidates/${ZELPHINE}`, `/candidates/${THESSALY}`, `/a/acme/candidates/${ZELPHINE}`];

  it('shows the read-only token none of it, in any answer of any account, even asked to reveal; nor a route key', async () => {
    const authorization = `Bearer ${READ_ONLY}`;
    const crawled = await crawlConsole({ base: dashboard, authorization, extra: [...extra, `/candidates/${ZELPHINE}/export`] });
    expect(found(crawled, /^\/events\/\d+$/)).toHaveLength(7);
    expect(found(crawled, /^\/a\/acme\/events\/\d+$/)).toHaveLength(4);
    const revealed = await crawlConsole({ base: dashboard, authorization, extra: withReveal(crawled.map((a) => a.path)), limit: 1000 });
    expect(leaks([...crawled, ...revealed])).toEqual([]);
    expect(crawled.find((a) => a.path.endsWith('/export'))!.status).toBe(403);
    const routeKey = acmePath.split('/').at(-1)!;
    expect([...crawled, ...revealed].filter((a) => a.text.includes(routeKey)).map((a) => a.path)).toEqual([]);
  });

  it('shows the full token none of it until it reveals; revealed, all of it', async () => {
    const authorization = `Bearer ${TOKEN}`;
    const crawled = await crawlConsole({
      base: dashboard,
      authorization,
      extra,
      skip: (path) => path.includes('reveal=1') || path.endsWith('/export'),
    });
    expect(found(crawled, /^\/events\/\d+$/)).toHaveLength(7);
    expect(found(crawled, /^\/a\/acme\/events\/\d+$/)).toHaveLength(4);
    expect(leaks(crawled)).toEqual([]);
    const page = await (await fetch(`${dashboard}/candidates/${ZELPHINE}?reveal=1`, { headers: { Authorization: authorization } })).text();
    expect(['Zelphine Quarkwood', 'joignable au 06 55 41 27 98', 'Zelphine habite loin du site.'].filter((s) => !page.includes(s))).toEqual(
      [],
    );
  });

  it.skipIf(!HAS_CHROMIUM)(
    "in Chromium: no Reveal for the read-only token, whatever the address asks; the full token's still works",
    async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
      try {
        const readOnly = await (await browser.newContext({ httpCredentials: { username: 'ops', password: READ_ONLY } })).newPage();
        await readOnly.goto(`${dashboard}/candidates/${ZELPHINE}?reveal=1`);
        expect(await readOnly.locator('#reveal').count()).toBe(0);
        expect(leaked(await readOnly.content())).toEqual([]);
        expect(await readOnly.locator('#responses blockquote').innerText()).toBe('***');
        const [large] = readDb(tmp.dbPath, (db) =>
          (
            db.prepare('SELECT inbox_id, raw, codec FROM inbox').all() as Array<{ inbox_id: number; raw: Buffer; codec: number | null }>
          ).filter((r) => {
            const text = received(r).toString('utf8');
            return text.includes(THESSALY) && text.indexOf('responses', text.indexOf(THESSALY)) > 0;
          }),
        );
        await readOnly.goto(`${dashboard}/events/${large!.inbox_id}?reveal=1`);
        const payload = await readOnly.locator('#payload').innerText();
        expect(leaked(payload)).toEqual([]);
        expect(payload).toContain(`"candidate_id": "${THESSALY}"`);

        const full = await (await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } })).newPage();
        await full.goto(`${dashboard}/candidates/${ZELPHINE}`);
        expect(leaked(await full.content())).toEqual([]);
        await full.click('#reveal');
        expect(await full.locator('#responses blockquote').innerText()).toContain(
          'je suis Zelphine Quarkwood, joignable au 06 55 41 27 98',
        );
        await full.goto(`${dashboard}/events/${large!.inbox_id}`);
        expect(leaked(await full.locator('#payload').innerText())).toEqual([]);
        await full.click('#reveal');
        expect(await full.locator('#payload').innerText()).toContain('Thessaly Vornhagen');

        // The switcher leads to the other account's pages, masked and with no Reveal for the read-only token as well.
        for (const page of [readOnly, full]) {
          await page.goto(`${dashboard}/`);
          await page.click('#account-switcher summary');
          await page.click('#account-switcher a[data-account="acme"]');
          await page.waitForURL(`${dashboard}/a/acme/`);
          expect(await page.locator('#current-account').getAttribute('data-account')).toBe('acme');
          await page.click(`a[href="/dashboard/a/acme/events"]`);
          await page.goto(`${dashboard}/a/acme/candidates/${ZELPHINE}?reveal=1`);
          expect(await page.locator('#reveal').count()).toBe(0);
        }
        expect(leaked(await readOnly.content())).toEqual([]);
        expect(await full.locator('#responses blockquote').innerText()).toContain('je suis Zelphine Quarkwood');
      } finally {
        await browser.close();
      }
    },
  );
});

describe.skipIf(!HAS_CHROMIUM)('the console in Chromium', () => {
  const tmp = tempDir();
  let serve: ServeProcess;
  let browser: import('playwright-core').Browser;
  let page: import('playwright-core').Page;
  let dashboard: string;
  const consoleErrors: string[] = [];
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', tmp.dbPath, '--secret', SECRET, '--dashboard-token', TOKEN]);
    dashboard = `${serve.baseUrl}/dashboard`;
    await feed(serve, [...LIFECYCLE, UNKNOWN, INVALID, 'this is { not json']);
    await waitFor(() => (inboxCounts(tmp.dbPath).pending ?? 0) === 0, 10_000, 'the projection');
    const context = await browser.newContext({
      httpCredentials: { username: 'ops', password: TOKEN },
      viewport: { width: 1280, height: 900 },
    });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    killChildren();
    tmp.cleanup();
  });

  it('shows on the overview the counts the database holds, and draws the chart', async () => {
    await page.goto(`${dashboard}/`);
    const db = inboxCounts(tmp.dbPath);
    for (const state of ['pending', 'projected', 'unknown', 'dead']) {
      expect(Number(await page.locator(`#inbox-counts td[data-state="${state}"]`).innerText()), state).toBe(db[state] ?? 0);
    }
    expect(Number(await page.locator('#inbox-counts td[data-state="total"]').innerText())).toBe(LIFECYCLE.length + 3);
    await page.locator('#events-chart.drawn canvas').waitFor();
    expect(Number(await page.locator('#events-chart').getAttribute('data-total'))).toBe(LIFECYCLE.length + 3);
    expect(await page.locator('#storage').innerText()).toBe('ready');
    // The chart, its styles and our script all load under the strict CSP: nothing was refused.
    expect(consoleErrors).toEqual([]);
  });

  it('filters events by kind and by campaign', async () => {
    await page.goto(`${dashboard}/events`);
    await page.selectOption('select[name="kind"]', 'candidate.added');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/kind=candidate.added/);
    const kinds = await page.locator('table.events td.kind').allInnerTexts();
    const added = readDb(
      tmp.dbPath,
      (db) => db.prepare("SELECT COUNT(*) AS n FROM inbox WHERE kind = 'candidate.added'").get() as { n: number },
    ).n;
    expect(kinds.length).toBe(added);
    expect(new Set(kinds)).toEqual(new Set(['candidate.added']));

    await page.goto(`${dashboard}/events`);
    await page.fill('input[name="campaign"]', RK4);
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/campaign=/);
    const rows = page.locator('table.events tbody tr');
    const inCampaign = LIFECYCLE.filter((l) => (JSON.parse(l) as { data: { campaign_id?: string } }).data.campaign_id === RK4).length;
    expect(await rows.count()).toBe(inCampaign);
    for (const cell of await page.locator('table.events tbody tr td:nth-child(5)').allInnerTexts()) expect(cell).toBe(RK4);
  });

  it("shows a dead letter's reasons, and projects it once mended and reprocessed", async () => {
    await page.goto(`${dashboard}/dead-letters`);
    const [dead] = readDb(
      tmp.dbPath,
      (db) => db.prepare("SELECT inbox_id FROM inbox WHERE state = 'dead' AND verdict = 'accepted'").all() as Array<{ inbox_id: number }>,
    );
    const row = page.locator(`table.dead-letters tr[data-inbox-id="${dead!.inbox_id}"]`);
    const reasons = await row.locator('ul.reasons').innerText();
    expect(reasons).toMatch(/candidate_id/);
    expect(reasons).toMatch(/interview_score/);

    // The operator mends the stored body, as after a fix upstream, then reprocesses that row.
    const mended = JSON.parse(INVALID) as { data: Record<string, unknown> };
    mended.data.candidate_id = 'cand-mended-console';
    mended.data.interview_score = 8;
    const db = new Database(tmp.dbPath);
    db.prepare('UPDATE inbox SET raw = ?, codec = 0 WHERE inbox_id = ?').run(Buffer.from(JSON.stringify(mended)), dead!.inbox_id);
    db.close();
    await row.locator('button', { hasText: 'Reprocess' }).click();
    await page.waitForURL(/requeued=1/);
    await waitFor(
      () =>
        readDb(
          tmp.dbPath,
          (d) => (d.prepare('SELECT state FROM inbox WHERE inbox_id = ?').get(dead!.inbox_id) as { state: string }).state,
        ) === 'projected',
      10_000,
      'the mended row projected',
    );
    await page.goto(`${dashboard}/events/${dead!.inbox_id}`);
    expect(await page.locator('#event-state').innerText()).toBe('projected');
    await page.goto(`${dashboard}/candidates/cand-mended-console`);
    expect(await page.locator('#candidate').innerText()).toMatch(/completed/);
  });

  it('reprocesses all that match a filter after a preview of how many', async () => {
    // The body that is not JSON stays dead: the preview does not count what it cannot reprocess.
    await page.goto(`${dashboard}/dead-letters/reprocess?state=dead`);
    expect(await page.locator('#preview-count').innerText()).toBe('0');
    await page.goto(`${dashboard}/dead-letters?kind=candidate.interview.rescheduled`);
    await page.click('#reprocess-all');
    expect(await page.locator('#preview-count').innerText()).toBe('1');
    await page.locator('form button', { hasText: 'Reprocess 1' }).click();
    await page.waitForURL(/requeued=1/);
    expect(await page.locator('#notice').innerText()).toMatch(/1 requeued/);
  });

  it('masks names, e-mails and phones until revealed, on the event and on the candidate page', async () => {
    const [added] = readDb(tmp.dbPath, (db) =>
      (
        db.prepare("SELECT inbox_id, raw, codec FROM inbox WHERE kind = 'candidate.added'").all() as Array<{
          inbox_id: number;
          raw: Buffer;
          codec: number | null;
        }>
      ).filter((r) => received(r).toString('utf8').includes(ELOISE)),
    );
    await page.goto(`${dashboard}/events/${added!.inbox_id}`);
    const masked = await page.locator('#payload').innerText();
    expect(masked).not.toContain('Marchand');
    expect(masked).not.toContain('eloise.marchand@gmail.com');
    expect(masked).not.toContain('+33760749015');
    expect(masked).toContain('"M***"');
    expect(masked).toContain('e***@gmail.com');
    expect(masked).toContain('+33 7** ** ** 15');
    await page.click('#reveal');
    const revealed = await page.locator('#payload').innerText();
    expect(revealed).toContain('eloise.marchand@gmail.com');

    await page.goto(`${dashboard}/candidates/${ELOISE}`);
    const candidate = await page.locator('#candidate').innerText();
    expect(candidate).not.toContain('Marchand');
    expect(candidate).toContain('É*** M***');
    expect(await page.locator('table.events tbody tr').count()).toBe(LIFECYCLE.filter((l) => l.includes(ELOISE)).length);
    await page.click('#reveal');
    expect(await page.locator('#candidate').innerText()).toContain('Éloïse Marchand');
  });

  it("shows the campaigns with the service's stats and lists candidates with its sort", async () => {
    await page.goto(`${dashboard}/campaigns`);
    expect(await page.locator(`tr[data-campaign-id="${RK4}"]`).innerText()).toMatch(/8\s+4\s+7\.38/);
    await page.goto(`${dashboard}/campaigns/${RK4}?sort=score_desc&per_page=3`);
    expect(await page.locator('table.candidates tbody tr td.num').allInnerTexts()).toEqual(['8.5', '7.5', '7']);
    expect(await page.locator('#pagination').innerText()).toMatch(/page 1 of 3 \(8 candidates\)/);
  });

  it('draws the chart when the token is in the address (http://ops:TOKEN@host/dashboard/), with no error', async () => {
    // fetch() refuses a URL with credentials, and a relative one resolves against this address.
    const context = await browser.newContext();
    const other = await context.newPage();
    const errors: string[] = [];
    other.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    other.on('pageerror', (error) => errors.push(error.message));
    const withCredentials = new URL(`${dashboard}/`);
    withCredentials.username = 'ops';
    withCredentials.password = TOKEN;
    expect((await other.goto(withCredentials.href))?.status()).toBe(200);
    const chart = other.locator('#events-chart');
    // Drawn, or the script's own words on why not.
    await other.locator('#events-chart.drawn, #events-chart:not(:empty)').first().waitFor();
    expect(await chart.getAttribute('class'), await chart.innerText()).toContain('drawn');
    expect(await chart.locator('canvas').count()).toBe(1);
    expect(Number(await other.locator('#events-chart').getAttribute('data-total'))).toBe(LIFECYCLE.length + 3);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('answers 401 to a browser with a wrong token', async () => {
    const context = await browser.newContext({ httpCredentials: { username: 'ops', password: 'not-the-token-at-all' } });
    const other = await context.newPage();
    const answer = await other.goto(`${dashboard}/`);
    expect(answer?.status()).toBe(401);
    expect(await other.content()).not.toContain('Inbox');
    await context.close();
  });
});

describe.skipIf(!HAS_CHROMIUM)('the console mounted in an Express app, in Chromium', () => {
  const tmp = tempDir();
  let receiver: Receiver;
  let server: { url: string; close: () => Promise<void> };
  let browser: import('playwright-core').Browser;
  let crmDown = true;
  const calls: string[] = [];
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    receiver = createReceiver({ database: tmp.dbPath, secret: SECRET, dispatch: { handlerAttempts: 1, handlerRetryDelayMs: 1 } });
    receiver.on(
      'candidate.added',
      async (event) => {
        if (crmDown) throw new Error('CRM unreachable (503)');
        calls.push(event.data.candidate_id);
      },
      { name: 'crm-sync' },
    );
    const app = express();
    app.post('/webhooks', receiver.middleware());
    app.use('/ops', receiver.dashboard({ token: TOKEN }));
    server = await listen(app as never);
    await receiver.replay([
      sampleEvent('candidate.added', { data: { candidate_id: 'cand-crm-1' } }),
      sampleEvent('candidate.added', { data: { candidate_id: 'cand-crm-2' } }),
    ]);
    await receiver.drain();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
    tmp.cleanup();
  });

  it('retries one handler failure, then all that match after the preview, once the handler is fixed', async () => {
    expect((await receiver.counts()).handler_failures).toBe(2);
    const context = await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } });
    const page = await context.newPage();
    await page.goto(`${server.url}/ops/dead-letters`);
    const failures = page.locator('table.handler-failures tbody tr');
    expect(await failures.count()).toBe(2);
    // The handler's message may name the candidate: only its class until revealed.
    expect(await failures.first().locator('td.error').innerText()).toBe('Error: ***');
    await page.click('#reveal');
    expect(await failures.first().innerText()).toMatch(/crm-sync[\s\S]*Error: CRM unreachable \(503\)/);

    crmDown = false;
    await failures.first().locator('button', { hasText: 'Retry' }).click();
    await page.waitForURL(/retried=1/);
    await receiver.drain();
    expect(calls).toHaveLength(1);

    await page.goto(`${server.url}/ops/dead-letters?handler=crm-sync`);
    await page.click('#retry-all');
    expect(await page.locator('#preview-count').innerText()).toBe('1');
    await page.locator('form button', { hasText: 'Retry 1' }).click();
    await page.waitForURL(/retried=1/);
    await receiver.drain();
    expect(calls.sort()).toEqual(['cand-crm-1', 'cand-crm-2']);
    expect((await receiver.counts()).handler_failures).toBe(0);
    await context.close();
  });
});
