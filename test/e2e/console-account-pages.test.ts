// An account's console pages (`<mount>/a/<account>/`), as `prequal-hooks serve` serves them and as
// an Express app mounting receiver.dashboard() deeper than one segment does: their stylesheets
// and scripts load, they name their account, the switcher keeps the page, and an address that is
// not valid percent-encoding is the sender's error (400), not the console's (500).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { findExecutable, needs } from '../support/needs.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_console_accounts_3a8f';
const ACME_SECRET = 'whsec_console_accounts_acme_6b1d';
const TOKEN = 'console-accounts-token-52e9c1';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const ASSETS = fileURLToPath(new URL('../../src/console/assets/', import.meta.url));

const CHROMIUM = findExecutable(['chromium', 'chromium-browser'], { override: process.env.CHROMIUM_PATH });
const HAS_CHROMIUM = needs('Chromium', CHROMIUM !== undefined, {
  install: '`apt-get install -y chromium` (.ci/run does), or put it on PATH, or set CHROMIUM_PATH',
  untested: "the account pages' browser test",
});

/** Adds the account `acme` to the database; its webhook path. */
async function addAcme(db: string): Promise<string> {
  const added = await runCliProcess([
    'accounts',
    'add',
    '--db',
    db,
    '--account',
    'acme',
    '--name',
    'Acme Staffing',
    '--secret',
    ACME_SECRET,
    '--json',
  ]);
  expect(added.code, added.stderr).toBe(0);
  return (JSON.parse(added.stdout) as { webhookPath: string }).webhookPath;
}

/** The stylesheets and scripts a page asks for, as absolute URLs. */
function assetsOf(page: string, url: string): string[] {
  const hrefs = [...page.matchAll(/<link rel="stylesheet" href="([^"]+)">|<script src="([^"]+)">/g)].map((m) => m[1] ?? m[2]!);
  return hrefs.map((href) => new URL(href.replaceAll('&amp;', '&'), url).href);
}

describe("an account's console pages", () => {
  const tmp = tempDir('prequal-hooks-console-accounts-');
  const mounts: Array<{ name: string; console: string }> = [];
  let serve: ServeProcess;
  let receiver: Receiver;
  let app: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    const serveDb = join(tmp.dir, 'serve.db');
    const acmePath = await addAcme(serveDb);
    serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', serveDb, '--secret', SECRET, '--dashboard-token', TOKEN]);
    // One event for acme: its chart counts it, the default account's does not.
    const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: 'cand-acme-1' } }), { secret: ACME_SECRET });
    expect((await fetch(`${serve.baseUrl}${acmePath}`, { method: 'POST', headers: request.headers, body: request.body })).status).toBe(200);

    const appDb = join(tmp.dir, 'app.db');
    await addAcme(appDb);
    receiver = createReceiver({ database: appDb, secret: SECRET });
    await receiver.forAccount('acme').replay([sampleEvent('candidate.added', { data: { candidate_id: 'cand-acme-1' } })]);
    const outer = express();
    // Two segments deep, in a router: the console knows its mount point from the request alone.
    const ops = express.Router();
    ops.use('/console', receiver.dashboard({ token: TOKEN }));
    outer.use('/ops', ops);
    app = await listen(outer as never);
    mounts.push({ name: 'serve', console: `${serve.baseUrl}/dashboard` }, { name: 'Express', console: `${app.url}/ops/console` });
    // The registry is read as the receivers start: wait until both list acme.
    for (const { console } of mounts)
      await waitFor(
        async () => ((await fetch(`${console}/a/acme/`, { headers: BEARER })).status === 200 ? true : undefined),
        5000,
        'acme listed',
      );
  });
  afterAll(async () => {
    await serve?.stop();
    await app?.close();
    await receiver?.close();
    killChildren();
    tmp.cleanup();
  });

  it('load their stylesheets and scripts, at any depth, in serve and in Express', async () => {
    const own = {
      'console.css': readFileSync(join(ASSETS, 'console.css'), 'utf8'),
      'console.js': readFileSync(join(ASSETS, 'console.js'), 'utf8'),
    };
    for (const { name, console } of mounts) {
      for (const path of [
        '/',
        '/a/acme/',
        '/a/acme/events',
        '/a/acme/candidates/cand-acme-1',
        '/a/acme/dead-letters/reprocess',
        '/accounts',
      ]) {
        const url = `${console}${path}`;
        const page = await fetch(url, { headers: BEARER });
        expect(page.status, `${name} ${path}`).toBe(200);
        const assets = assetsOf(await page.text(), url);
        expect(
          assets
            .map((a) => a.split('/').at(-1)!)
            .filter((file) => file in own)
            .sort(),
          `${name} ${path}`,
        ).toEqual(['console.css', 'console.js']);
        for (const asset of assets) {
          const answer = await fetch(asset, { headers: BEARER });
          expect(answer.status, `${name} ${path}: ${asset}`).toBe(200);
          expect(answer.headers.get('content-type'), asset).toMatch(/^text\/(css|javascript); charset=utf-8$/);
          const file = asset.split('/').at(-1)!;
          const body = await answer.text();
          if (file in own) expect(body, asset).toBe(own[file as keyof typeof own]);
        }
      }
      // The overview of an account draws its chart: uPlot's files as well.
      const overview = `${console}/a/acme/`;
      const files = assetsOf(await (await fetch(overview, { headers: BEARER })).text(), overview).map((a) => a.split('/').at(-1));
      expect(files.sort(), name).toEqual(['console.css', 'console.js', 'uPlot.iife.min.js', 'uPlot.min.css']);
    }
  });

  it('name their account in the title and the heading; the default account is named once there are others', async () => {
    for (const { name, console } of mounts) {
      const acme = await (await fetch(`${console}/a/acme/events`, { headers: BEARER })).text();
      expect(/<title>([^<]*)<\/title>/.exec(acme)?.[1], name).toBe('Events · acme (Acme Staffing) · prequal-hooks');
      expect(/<h1>([\s\S]*?)<\/h1>/.exec(acme)?.[1], name).toMatch(/^Events .*acme \(Acme Staffing\)/);
      const own = await (await fetch(`${console}/events`, { headers: BEARER })).text();
      expect(/<title>([^<]*)<\/title>/.exec(own)?.[1], name).toBe('Events · default · prequal-hooks');
      // The overview of every account belongs to none.
      const accounts = await (await fetch(`${console}/accounts`, { headers: BEARER })).text();
      expect(/<title>([^<]*)<\/title>/.exec(accounts)?.[1], name).toBe('Accounts · prequal-hooks');
    }
  });

  it('switch account on the page they are on', async () => {
    for (const { name, console } of mounts) {
      const root = new URL(console).pathname;
      for (const [path, page] of [
        ['/a/acme/candidates/cand-acme-1?reveal=1', '/candidates/cand-acme-1'],
        ['/a/acme/events?state=dead', '/events'],
        ['/a/acme/', '/'],
        ['/dead-letters', '/dead-letters'],
      ] as const) {
        const text = await (await fetch(`${console}${path}`, { headers: BEARER })).text();
        const switcher = /<details class="accounts" id="account-switcher">([\s\S]*?)<\/details>/.exec(text)![1]!;
        const links = Object.fromEntries(
          [...switcher.matchAll(/<a href="([^"]+)" data-account="([^"]+)"/g)].map(([, href, account]) => [account, href]),
        );
        // Its filters and reveal stay behind: they are the first account's.
        expect(links, `${name} ${path}`).toEqual({ default: `${root}${page}`, acme: `${root}/a/acme${page}` });
      }
    }
  });

  it('answer 400 in the error envelope, not 500, to an address that is not valid percent-encoding', async () => {
    for (const { name, console } of mounts) {
      for (const path of [
        '/a/%E0%A4%A/',
        '/a/%E0%A4%A/events',
        '/candidates/%ZZ',
        '/a/acme/candidates/%ZZ',
        '/events/%E0%A4%A',
        '/campaigns/%',
      ]) {
        const answer = await fetch(`${console}${path}`, { headers: BEARER });
        expect(answer.status, `${name} ${path}`).toBe(400);
        const body = (await answer.json()) as { error: { code: string; message: string } };
        expect(body.error, `${name} ${path}`).toMatchObject({
          code: 'MALFORMED_URL',
          message: expect.stringContaining('percent-encoding'),
        });
        // The console's headers still: it is the console's answer.
        expect(answer.headers.get('x-content-type-options'), `${name} ${path}`).toBe('nosniff');
      }
      // Authentication still comes first.
      expect((await fetch(`${console}/candidates/%ZZ`)).status, name).toBe(401);
    }
    // Not a failure of the console: nothing logged at error.
    expect(serve.logLines().filter((line) => line.msg === 'console request failed')).toEqual([]);
  });

  it.skipIf(!HAS_CHROMIUM)('in Chromium: styled, with the chart drawn and no request failed, in serve and in Express', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    try {
      for (const { name, console } of mounts) {
        const context = await browser.newContext({ httpCredentials: { username: 'ops', password: TOKEN } });
        const page = await context.newPage();
        const failed: string[] = [];
        page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
        page.on('response', (response) => {
          if (response.status() >= 400) failed.push(`${response.url()}: ${response.status()}`);
        });
        page.on('console', (message) => {
          if (message.type() === 'error') failed.push(message.text());
        });
        page.on('pageerror', (error) => failed.push(error.message));

        await page.goto(`${console}/a/acme/`);
        // console.css applied: the header's ink, the page's background.
        const background = (selector: string) =>
          page.evaluate<string>(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).backgroundColor`);
        expect(await background('header'), name).toBe('rgb(29, 35, 48)');
        expect(await background('body'), name).toBe('rgb(246, 247, 249)');
        // console.js ran with uPlot: the chart is drawn, from acme's data (one event).
        await page.locator('#events-chart.drawn canvas').waitFor();
        expect(await page.locator('#events-chart').getAttribute('data-total'), name).toBe('1');
        expect(await page.title(), name).toBe('Overview · acme (Acme Staffing) · prequal-hooks');

        // The switcher keeps the page: acme's events to the default account's events.
        await page.goto(`${console}/a/acme/events`);
        await page.click('#account-switcher summary');
        await page.click('#account-switcher a[data-account="default"]');
        await page.waitForURL(`${console}/events`);
        expect(await page.locator('#current-account').getAttribute('data-account'), name).toBe('default');
        expect(failed, name).toEqual([]);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  });
});
