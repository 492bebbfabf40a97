#!/usr/bin/env node
// Whether serving several accounts costs more than noise (docs/accounts.md): `npm run
// bench:accounts-spread` (about 1.5 minutes; builds, then node build/bench/accounts-spread.js;
// --rounds 3, --duration 8, --warmup 2, --accounts 50, --connections 50, --one added|default, --profile: each server under node --cpu-prof, kept in bench/tmp/profiles).
// A real `prequal-hooks serve` child (the run's frozen build, SQLite) takes 50 connections of
// autocannon load, every request a distinct signed event, in two variants, on copies of one
// database holding 50 accounts added with `prequal-hooks accounts add --json`:
//   1 account     every request to one added account's /webhooks/<route key> (with --one default:
//                 to /webhooks, the default account, signed with serve --secret)
//   50 accounts   requests spread over the 50 accounts' paths by campaign (each account holds whole
//                 campaigns, as agencies do), each signed with its account's secret
// Both variants run on the same registry and the same routing code, so that the only difference is
// the spread. Rounds alternate the order (AB, BA, AB…); each run is a fresh server on a fresh copy,
// warmed up, then measured: 2xx/s, p50/p99, the server's CPU µs per 2xx (/proc/<pid>/stat), and
// afterwards every acknowledged event is looked for in the inbox, per account. Results: a table on
// stdout (medians, the ratio 50 ÷ 1, and each round's ratio: the noise), JSON in
// bench/results/accounts-spread.json.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createRequestPool, fire, summariseRun, type RequestPool } from './lib/load.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { cpuMicros, diskBytesWritten, killLeftovers, startServer } from './lib/processes.js';
import { snapshotBuild, type FrozenBuild } from './lib/snapshot.js';
import { inboxCounts, removeDatabase } from './lib/database.js';
import { addAccounts, copyDatabase, type SpreadRoute } from './lib/spread.js';
import { median, round } from './lib/stats.js';
import type { RunSummary } from './lib/types.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    accounts: { type: 'string', default: '50' },
    connections: { type: 'string', default: '50' },
    one: { type: 'string', default: 'added' },
    profile: { type: 'boolean', default: false },
  },
});
const settings = {
  rounds: Number(flags.rounds),
  durationSec: Number(flags.duration),
  warmupSec: Number(flags.warmup),
  accounts: Number(flags.accounts),
  connections: Number(flags.connections),
  /** The 1-account variant's account: `added` (the first of the accounts) or `default` (/webhooks). */
  one: flags.one,
};
if (settings.one !== 'added' && settings.one !== 'default') throw new Error('--one: added or default');

const TMP = join(BENCH_TMP, 'accounts-spread');
const DEFAULT_SECRET = 'bench-secret-5b1f0c2e9d';
const log = (message: string): void => {
  process.stderr.write(`[accounts-spread ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
};

type VariantId = 'one' | 'spread';
interface Variant {
  id: VariantId;
  label: string;
  routes: SpreadRoute[];
}

interface VariantRound extends RunSummary {
  round: number;
  cpuUsPerRequest: number | null;
  /** Bytes the server made the disk write (WAL, checkpoints), a 2xx (/proc/<pid>/io). */
  diskBytesPerRequest: number | null;
  acknowledged: number;
  stored: number;
  /** Accounts with fewer inbox rows than 2xx answers (warm-up included): none when every acknowledged event was stored. */
  accountsMissingEvents: string[];
  accountsLoaded: number;
  everyAcknowledgedEventStored: boolean;
}

/** Until the server routes `route`'s path (a badly signed body: 401 once routed, 503 while it reads the registry). */
async function waitRouted(url: string, route: SpreadRoute): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const response = await fetch(`${url}${route.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': 'sha256=00' },
      body: '{}',
    });
    await response.arrayBuffer();
    if (response.status !== 503) return;
    if (Date.now() > deadline) throw new Error(`${route.path} still answers 503 after 15 s`);
    await delay(50);
  }
}

/** Every account that answered fewer stored rows than 2xx. */
function missingEvents(acknowledged: Map<string, number>, stored: Record<string, number>): string[] {
  return [...acknowledged].filter(([account, n]) => (stored[account] ?? 0) < n).map(([account]) => account);
}

/** One variant for one round: a fresh server on a fresh copy of the template, warm-up, measured run, inbox check. */
/**
 * Which account request `i` goes to, of many: by its campaign (FNV-1a of the id), so that each
 * account holds whole campaigns and their candidates' histories, as agencies do. The projected rows
 * are then as many as with one account; spread request by request, each account would hold a
 * piece of every candidate, and the second variant would write up to fifty times the rows.
 */
function campaignIndex(pool: RequestPool, i: number): number {
  const data = pool.eventAt(i).data as { campaign_id?: string; last_campaign_id?: string };
  const id = data.campaign_id ?? data.last_campaign_id ?? '';
  let hash = 0x811c9dc5;
  for (let k = 0; k < id.length; k++) hash = Math.imul(hash ^ id.charCodeAt(k), 0x01000193) >>> 0;
  return hash;
}

async function measureVariant(
  variant: Variant,
  template: string,
  pool: RequestPool,
  code: FrozenBuild,
  roundNo: number,
): Promise<VariantRound> {
  const db = join(TMP, `${variant.id}-${roundNo}.db`);
  copyDatabase(template, db);
  const server = await startServer({
    name: `serve-${variant.id}`,
    command: process.execPath,
    args: [code.cli, 'serve', '--port', '0', '--db', db, '--secret', DEFAULT_SECRET],
    // --profile: each server under node --cpu-prof, its profile kept in bench/tmp/profiles.
    nodeOptions: flags.profile
      ? ['--cpu-prof', '--cpu-prof-dir', join(BENCH_TMP, 'profiles'), '--cpu-prof-name', `spread-${variant.id}-${roundNo}.cpuprofile`]
      : [],
    env: { BENCH_DIST: code.dist },
    logFile: `${db}.log`,
  });
  const acknowledged = new Map<string, number>();
  const routeOf = (i: number): SpreadRoute => variant.routes[campaignIndex(pool, i) % variant.routes.length]!;
  let measured: RunSummary & { cpuUsPerRequest: number | null; diskBytesPerRequest: number | null };
  try {
    await waitRouted(server.url, variant.routes[0]!);
    const common = {
      url: server.url,
      pool,
      cursor: { next: 0 },
      headerStyle: 'service' as const,
      connections: settings.connections,
      route: routeOf,
      onAnswer(i: number, status: number) {
        if (status < 200 || status >= 300) return;
        const account = routeOf(i).account;
        acknowledged.set(account, (acknowledged.get(account) ?? 0) + 1);
      },
    };
    await fire({ ...common, durationSec: settings.warmupSec });
    const cpuBefore = cpuMicros(server.pid);
    const writtenBefore = diskBytesWritten(server.pid);
    const run = summariseRun(await fire({ ...common, durationSec: settings.durationSec }));
    const cpuAfter = cpuMicros(server.pid);
    const writtenAfter = diskBytesWritten(server.pid);
    const perRequest = (before: number | null, after: number | null) =>
      before !== null && after !== null && run.ok > 0 ? Math.round((after - before) / run.ok) : null;
    measured = { ...run, cpuUsPerRequest: perRequest(cpuBefore, cpuAfter), diskBytesPerRequest: perRequest(writtenBefore, writtenAfter) };
  } finally {
    const exit = await server.stop();
    if (exit.code !== 0) log(`  serve (${variant.id}) exited with ${JSON.stringify(exit)}`);
  }
  const stored = inboxCounts(db, 'account');
  removeDatabase(db);
  const missing = missingEvents(acknowledged, stored);
  return {
    ...measured,
    round: roundNo,
    acknowledged: [...acknowledged.values()].reduce((a, b) => a + b, 0),
    stored: Object.values(stored).reduce((a, b) => a + b, 0),
    accountsMissingEvents: missing,
    accountsLoaded: acknowledged.size,
    everyAcknowledgedEventStored: missing.length === 0,
  };
}

interface VariantSummary {
  label: string;
  requestsPerSec: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  cpuUsPerRequest: number | null;
  diskBytesPerRequest: number | null;
  everyAcknowledgedEventStored: boolean;
  rounds: VariantRound[];
}

const medianOf = (rounds: VariantRound[], pick: (r: VariantRound) => number | null): number | null =>
  median(rounds.map(pick).filter((x): x is number => x !== null));

function summarise(variant: Variant, rounds: VariantRound[]): VariantSummary {
  return {
    label: variant.label,
    requestsPerSec: round(
      medianOf(rounds, (r) => r.requestsPerSec),
      0,
    ),
    p50Ms: medianOf(rounds, (r) => r.p50Ms),
    p99Ms: medianOf(rounds, (r) => r.p99Ms),
    cpuUsPerRequest: medianOf(rounds, (r) => r.cpuUsPerRequest),
    diskBytesPerRequest: medianOf(rounds, (r) => r.diskBytesPerRequest),
    everyAcknowledgedEventStored: rounds.every((r) => r.everyAcknowledgedEventStored),
    rounds,
  };
}

const ratio = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || a === undefined || b === null || b === undefined || b === 0 ? null : round(a / b, 2);

type Metric = 'requestsPerSec' | 'p50Ms' | 'p99Ms' | 'cpuUsPerRequest' | 'diskBytesPerRequest';
const METRICS: Metric[] = ['requestsPerSec', 'p50Ms', 'p99Ms', 'cpuUsPerRequest', 'diskBytesPerRequest'];

/** 50 ÷ 1 of the medians, and of each round's pair (their spread: the noise). */
function ratios(one: VariantSummary, spread: VariantSummary) {
  const ofMedians = Object.fromEntries(METRICS.map((m) => [m, ratio(spread[m], one[m])])) as Record<Metric, number | null>;
  const byRound = Object.fromEntries(METRICS.map((m) => [m, one.rounds.map((r, n) => ratio(spread.rounds[n]?.[m], r[m]))])) as Record<
    Metric,
    Array<number | null>
  >;
  return { ofMedians, byRound };
}

function table(one: VariantSummary, spread: VariantSummary, r: ReturnType<typeof ratios>): string {
  const cell = (x: number | null, width = 12) => String(x ?? '-').padStart(width);
  const row = (label: string, values: Array<number | null>, tail = '') =>
    `  ${label.padEnd(30)}${values.map((v) => cell(v)).join('')}${tail}`;
  const stored = (s: VariantSummary) => `   ${s.everyAcknowledgedEventStored}`;
  const lines = [
    `prequal-hooks serve (SQLite), ${settings.connections} connections, ${settings.rounds} rounds × ${settings.durationSec} s per variant (alternating order), warm-up ${settings.warmupSec} s`,
    `  ${''.padEnd(30)}${['req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'disk B/req'].map((h) => h.padStart(12)).join('')}   every 2xx stored`,
    row(
      one.label,
      METRICS.map((m) => one[m]),
      stored(one),
    ),
    row(
      spread.label,
      METRICS.map((m) => spread[m]),
      stored(spread),
    ),
    row(
      `${settings.accounts} ÷ 1 (medians)`,
      METRICS.map((m) => r.ofMedians[m]),
    ),
    `  each round's ${settings.accounts} ÷ 1 (the noise): req/s ${r.byRound.requestsPerSec.join(', ')}; CPU µs/req ${r.byRound.cpuUsPerRequest.join(', ')}; disk B/req ${r.byRound.diskBytesPerRequest.join(', ')}; p99 ${r.byRound.p99Ms.join(', ')}`,
  ];
  return lines.join('\n');
}

/** The variants over `settings.rounds` rounds, the order alternating (AB, BA, …). */
async function measure(variants: [Variant, Variant], template: string, code: FrozenBuild): Promise<Record<VariantId, VariantRound[]>> {
  const pool = createRequestPool({ secret: DEFAULT_SECRET, size: 20_000 });
  const rounds: Record<VariantId, VariantRound[]> = { one: [], spread: [] };
  for (let n = 0; n < settings.rounds; n++) {
    const order = n % 2 === 0 ? variants : ([variants[1], variants[0]] as const);
    for (const variant of order) {
      const r = await measureVariant(variant, template, pool, code, n + 1);
      log(
        `round ${n + 1} ${variant.label}: ${Math.round(r.requestsPerSec)} req/s, p99 ${r.p99Ms} ms, ${r.cpuUsPerRequest} µs CPU/req, ${r.acknowledged} acknowledged, ${r.stored} stored`,
      );
      rounds[variant.id].push(r);
    }
  }
  return rounds;
}

async function main(): Promise<void> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const machine = machineInfo(ROOT, TMP);
  const code = snapshotBuild(ROOT, join(TMP, 'code'));
  const template = join(TMP, 'template.db');
  const started = performance.now();
  const routes = await addAccounts(code.cli, template, settings.accounts, { BENCH_DIST: code.dist });
  log(`${settings.accounts} accounts added with prequal-hooks accounts add in ${Math.round(performance.now() - started)} ms`);
  const single: SpreadRoute = settings.one === 'default' ? { account: 'default', path: '/webhooks', secret: DEFAULT_SECRET } : routes[0]!;
  const variants: [Variant, Variant] = [
    { id: 'one', label: `1 account (${settings.one === 'default' ? '/webhooks' : 'an added one'})`, routes: [single] },
    { id: 'spread', label: `${settings.accounts} accounts, by campaign`, routes },
  ];
  const rounds = await measure(variants, template, code);
  const one = summarise(variants[0], rounds.one);
  const spread = summarise(variants[1], rounds.spread);
  const r = ratios(one, spread);
  console.log(table(one, spread, r));
  machine.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const build = { distBuiltAt: code.distBuiltAt, distFingerprint: code.distFingerprint, srcFingerprint: code.srcFingerprint };
  const results = { date: new Date().toISOString(), machine, git: gitInfo(ROOT), build, settings, one, spread, ratios: r };
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'accounts-spread.json'), `${JSON.stringify(results, null, 2)}\n`);
  rmSync(TMP, { recursive: true, force: true });
}

try {
  await main();
} finally {
  killLeftovers();
}
