#!/usr/bin/env node
// Retakes the README's console screenshots (docs/console-*.png): `npm run screenshots`, or
// `node scripts/screenshots.js --out <folder>` after `npm run build`. Fixed data (the
// campaign-lifecycle scenario and three bodies set aside, received over signed HTTP at fixed
// times in the last hour) and a frozen clock on both sides, so two runs on one machine give
// the same bytes. Drives Chromium (/usr/bin/chromium, or CHROMIUM_PATH) with playwright-core.
import { setClock } from './frozen-clock.js'; // first: before anything reads the time
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import express from 'express';
import { chromium } from 'playwright-core';
import { createLogger, createReceiver } from '../dist/index.js';
import { FIXTURES_DIR, signedRequest } from '../dist/testing/index.js';

const NOW = Date.parse('2026-11-25T16:30:00.000Z');
const MINUTE = 60_000;
const SECRET = 'whsec_console_screenshots_5c2e';
const TOKEN = 'console-screenshots-token-0b9d';
const ELOISE = 'f332892f-d38e-44df-8ebf-7c9f49065885';
const VIEWPORT = { width: 1280, height: 900 };

/** The bodies to send and when each is received: the scenario spread over the last hour, its
 *  bursts kept (receipt time follows the event's own timestamp), then three set aside. */
function deliveries() {
  const lines = readFileSync(`${FIXTURES_DIR}scenarios/campaign-lifecycle.ndjson`, 'utf8').trim().split('\n');
  const stamps = lines.map((line) => Date.parse(JSON.parse(line).timestamp));
  const first = Math.min(...stamps);
  const span = Math.max(...stamps) - first || 1;
  let previous = 0;
  const scheduled = lines.map((body, i) => {
    const at = Math.max(previous + 1_000, Math.round(NOW - 58 * MINUTE + ((stamps[i] - first) / span) * 50 * MINUTE));
    previous = at;
    return { body, at };
  });
  return [
    ...scheduled,
    { body: readFileSync(`${FIXTURES_DIR}invalid/unknown-kind.json`, 'utf8'), at: NOW - 6 * MINUTE },
    { body: readFileSync(`${FIXTURES_DIR}invalid/invalid-data.json`, 'utf8'), at: NOW - 4 * MINUTE },
    { body: 'this is { not json', at: NOW - 3 * MINUTE },
  ];
}

async function startConsole(database) {
  const receiver = createReceiver({ database, secret: SECRET, logger: createLogger({ level: 'silent' }) });
  await receiver.ready();
  const app = express();
  app.post('/webhooks', receiver.middleware());
  app.use('/dashboard', receiver.dashboard({ token: TOKEN }));
  const server = await new Promise((done) => {
    const listening = app.listen(0, '127.0.0.1', () => done(listening));
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
    await receiver.close();
  };
  return { receiver, url, close };
}

// Each body is received and projected at its own frozen instant, so received_at and
// processed_at do not depend on how fast this machine is.
async function feed(console, schedule) {
  for (const { body, at } of schedule) {
    setClock(at);
    const request = signedRequest(body, { secret: SECRET });
    const answer = await fetch(`${console.url}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
    await answer.arrayBuffer();
    if (answer.status !== 200 && body.startsWith('{'))
      throw new Error(`the receiver answered ${answer.status} to a fixture: rebuild (npm run build) and retry`);
    await console.receiver.drain();
  }
  setClock(NOW);
}

async function shoot(url, out) {
  const executablePath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (path) => path && existsSync(path),
  );
  if (executablePath === undefined) throw new Error('No Chromium found: install it (apt-get install -y chromium) or set CHROMIUM_PATH.');
  const browser = await chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--hide-scrollbars', '--force-color-profile=srgb'],
  });
  try {
    // uPlot prints the time axis in the browser's zone and locale: fix both.
    const context = await browser.newContext({
      httpCredentials: { username: 'ops', password: TOKEN },
      viewport: VIEWPORT,
      deviceScaleFactor: 1,
      timezoneId: 'UTC',
      locale: 'en-GB',
    });
    const page = await context.newPage();
    await page.clock.setFixedTime(NOW); // the page's script reads no clock today; if it ever does
    await page.goto(`${url}/dashboard/`);
    await page.locator('#events-chart.drawn canvas').waitFor();
    await page.screenshot({ path: join(out, 'console-overview.png'), fullPage: true, animations: 'disabled', caret: 'hide' });
    await page.goto(`${url}/dashboard/candidates/${ELOISE}`);
    await page.screenshot({ path: join(out, 'console-candidate.png'), fullPage: true, animations: 'disabled', caret: 'hide' });
  } finally {
    await browser.close();
  }
}

async function main() {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(import.meta.dirname, '../docs') } } });
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), 'prequal-hooks-screenshots-'));
  const console = await startConsole(join(scratch, 'hooks.db'));
  try {
    await feed(console, deliveries());
    await shoot(console.url, out);
  } finally {
    await console.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(`wrote ${join(out, 'console-overview.png')} and ${join(out, 'console-candidate.png')}\n`);
}

// Real timers still run under the frozen clock: a page that never draws ends the run.
setTimeout(() => {
  process.stderr.write('screenshots: gave up after 120 s (did the chart draw?)\n');
  process.exit(1);
}, 120_000).unref();

main().catch((error) => {
  process.stderr.write(`screenshots: ${error.message}\n`);
  process.exitCode = 1;
});
