#!/usr/bin/env node
// What the operator's reads cost the intake: `npm run bench:operator-reads` (builds, then node
// build/bench/operator-reads.js; --engine sqlite|postgres|both, default sqlite; --events N,
// default 500000; --phase-seconds; --readers, default 1, or a list: 1,8; --profile). A real `prequal-hooks serve` on a database of N
// events (a generated scenario replayed by `replay`), with its console and /metrics. SQLite: the
// file is made once and kept in bench/tmp/operator-reads/, copied for each run. PostgreSQL: a
// durable server of the machine's binaries (bench/lib/postgres.ts), loaded by `prequal-hooks
// replay --db postgres://…` at each run (the scenario file is kept), as it lives only as long as
// the run. Two phases of the same run: the service's signed deliveries alone, one every 50 ms
// (the baseline), then the same deliveries while loops read the console's pages and /metrics as
// fast as they can. For each phase: the deliveries' p50 / p99 / max, and the event-loop lag serve
// reports on /metrics (prequal_hooks_nodejs_eventloop_lag_*, the worst of the scrapes: each
// scrape starts a new window). Goal: at most 20 ms added to the p99. On PostgreSQL,
// --counters-migration then times the counters migration (015) applied again to the loaded
// database while deliveries keep coming (bench/lib/counters-migration.ts).
// Results: a table on stdout per engine, JSON in bench/results/operator-reads[-postgres][-<label>].json.
//   BENCH_DIST=<another build's dist folder> node build/bench/operator-reads.js --label before
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { writeScenario } from './make-scenario.js';
import { measureCountersMigration, type CountersMigration } from './lib/counters-migration.js';
import { removeDatabase } from './lib/database.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { distModule, distUrl, RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { startBenchPostgres } from './lib/postgres.js';
import { postSigned } from './lib/signed-post.js';
import { killLeftovers, measureCommand, startServer } from './lib/processes.js';
import { snapshotBuild } from './lib/snapshot.js';
import { distribution, round } from './lib/stats.js';
import type { Distribution } from './lib/types.js';

const TMP = join(BENCH_TMP, 'operator-reads');
const SECRET = 'bench-secret-operator-reads-41c9';
const TOKEN = 'bench-console-token-7f3e2a91';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const { values: flags } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: '500000' },
    'phase-seconds': { type: 'string', default: '20' },
    readers: { type: 'string', default: '1' },
    'every-ms': { type: 'string', default: '50' },
    'counters-migration': { type: 'boolean', default: false },
    label: { type: 'string' },
    profile: { type: 'boolean', default: false },
    fresh: { type: 'boolean', default: false },
  },
});
type Engine = 'sqlite' | 'postgres';
const engines: Engine[] =
  flags.engine === 'both' ? ['sqlite', 'postgres'] : flags.engine === 'sqlite' || flags.engine === 'postgres' ? [flags.engine] : [];
if (engines.length === 0) throw new Error(`--engine ${flags.engine}: sqlite, postgres or both`);
const settings = {
  events: Number(flags.events),
  phaseSeconds: Number(flags['phase-seconds']),
  /** Read loops at once in each phase with reads, one phase per count. */
  readers: flags.readers.split(',').map(Number),
  everyMs: Number(flags['every-ms']),
};
// The code under test, frozen for the run (the children read migrations/ beside dist/), unless another build's is given.
if (process.env.BENCH_DIST === undefined) {
  rmSync(join(TMP, 'code'), { recursive: true, force: true });
  process.env.BENCH_DIST = snapshotBuild(ROOT, join(TMP, 'code')).dist;
}
const DIST = process.env.BENCH_DIST;
const CLI = fileURLToPath(distUrl('cli/main.js'));
const { sign, replay } = await distModule();

/** The scenario of N events, written once and kept (PostgreSQL replays it at every run). */
function scenarioFile(keep: boolean): string {
  const scenario = join(TMP, `scenario-${settings.events}.ndjson`);
  if (!existsSync(scenario) || flags.fresh || !keep)
    writeScenario({ events: settings.events, duplicates: 0.1, seed: 20261120, out: scenario });
  return scenario;
}

/** The SQLite database of N events, made once (scenario, then replay: the bulk loader) and kept for later runs. */
async function filledDatabase(): Promise<string> {
  const db = join(TMP, `events-${settings.events}.db`);
  if (existsSync(db) && !flags.fresh) return db;
  removeDatabase(db);
  const scenario = scenarioFile(false);
  const partial = join(TMP, `events-${settings.events}.partial.db`);
  removeDatabase(partial);
  const started = performance.now();
  await replay(scenario, { database: partial });
  console.log(`made ${db}: ${settings.events} events replayed in ${Math.round((performance.now() - started) / 1000)} s`);
  renameSync(partial, db);
  if (existsSync(`${partial}.accounts-key`)) renameSync(`${partial}.accounts-key`, `${db}.accounts-key`);
  return db;
}

interface Page {
  name: string;
  path: string;
}

/** What the read loops ask for: the biggest campaign and its first candidate, read before serve starts. */
async function consolePages(one: (sql: string) => Promise<string>): Promise<Page[]> {
  const campaign = await one('SELECT campaign_id FROM candidates GROUP BY campaign_id ORDER BY COUNT(*) DESC, campaign_id LIMIT 1');
  const candidate = await one(`SELECT candidate_id FROM candidates WHERE campaign_id = '${campaign}' ORDER BY candidate_id LIMIT 1`);
  return [
    { name: 'overview', path: '/dashboard/' },
    { name: 'per-minute chart', path: '/dashboard/api/events-per-minute' },
    { name: 'events', path: '/dashboard/events' },
    { name: 'events of a campaign', path: `/dashboard/events?campaign=${campaign}` },
    { name: 'events of a candidate', path: `/dashboard/events?candidate=${candidate}` },
    { name: 'dead letters', path: '/dashboard/dead-letters' },
    { name: 'campaigns', path: '/dashboard/campaigns' },
    { name: 'candidates of a campaign', path: `/dashboard/campaigns/${campaign}?status=completed&sort=score_desc` },
    { name: 'candidate', path: `/dashboard/candidates/${candidate}` },
    { name: 'export', path: `/dashboard/candidates/${candidate}/export` },
    { name: 'metrics', path: '/metrics' },
  ];
}

/** The database serve runs on, the pages to read, and how to let it go. */
interface Target {
  engine: Engine;
  db: string;
  pages: Page[];
  /** What making it took (PostgreSQL: the replay of this run). */
  loaded?: { wallMs: number; eventsPerSec: number };
  server?: string;
  release(): Promise<void>;
}

/** A copy of the kept SQLite file, on disk before serve starts (the copy's write-back would otherwise slow serve's first fsyncs, the baseline's). */
async function sqliteTarget(): Promise<Target> {
  const filled = await filledDatabase();
  const db = join(TMP, 'serve.db');
  removeDatabase(db);
  copyFileSync(filled, db);
  const copy = openSync(db, 'r+');
  fsyncSync(copy);
  closeSync(copy);
  if (existsSync(`${filled}.accounts-key`)) copyFileSync(`${filled}.accounts-key`, `${db}.accounts-key`);
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const pages = await consolePages((sql) => Promise.resolve(file.prepare(sql).pluck().get() as string));
    return { engine: 'sqlite', db, pages, release: () => Promise.resolve(removeDatabase(db)) };
  } finally {
    file.close();
  }
}

/** A durable PostgreSQL of this run, loaded by `prequal-hooks replay` from the kept scenario. */
async function postgresTarget(): Promise<Target> {
  const scenario = scenarioFile(true);
  const postgres = await startBenchPostgres(DIST);
  try {
    const db = await postgres.fresh();
    const run = await measureCommand(process.execPath, [CLI, 'replay', scenario, '--db', db], { cwd: ROOT });
    if (run.code !== 0) throw new Error(`replay into PostgreSQL exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
    const loaded = { wallMs: Math.round(run.wallMs), eventsPerSec: Math.round(settings.events / (run.wallMs / 1000)) };
    console.log(`loaded PostgreSQL ${postgres.version}: ${settings.events} events replayed in ${Math.round(run.wallMs / 1000)} s`);
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    try {
      // Statistics as autovacuum would have them after a while: plans of a database in use.
      await client.query('VACUUM ANALYZE');
      const pages = await consolePages(async (sql) => Object.values((await client.query(sql)).rows[0] as object)[0] as string);
      return {
        engine: 'postgres',
        db,
        pages,
        loaded,
        server: `PostgreSQL ${postgres.version} (${postgres.origin}), durable`,
        release: () => postgres.stop(),
      };
    } finally {
      await client.end();
    }
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

interface Timed {
  status: number;
  ms: number;
}

async function deliver(url: string, n: number): Promise<Timed> {
  const body = JSON.stringify({
    event: 'candidate.added',
    timestamp: '2026-11-27T10:00:00Z',
    data: { campaign_id: 'cmp_bench_reads', candidate_id: `cand_reads_${n}`, first_name: 'Bench', last_name: `Reads ${n}` },
  });
  const { status, ms } = await postSigned(`${url}/webhooks`, body, sign(SECRET, body), 30_000);
  return { status, ms };
}

/** The worst event-loop lag windows serve reported on the scrapes of a phase (seconds in, ms out). */
class LoopLag {
  maxMs = 0;
  p99Ms = 0;
  scrapes = 0;
  note(metrics: string): void {
    const value = (name: string) =>
      Number(new RegExp(`^prequal_hooks_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(metrics)?.[1]);
    const max = value('max');
    const p99 = value('p99');
    if (Number.isFinite(max)) this.maxMs = Math.max(this.maxMs, max * 1000);
    if (Number.isFinite(p99)) this.p99Ms = Math.max(this.p99Ms, p99 * 1000);
    this.scrapes++;
  }
}

async function get(url: string, lag: LoopLag): Promise<Timed> {
  const started = performance.now();
  try {
    const response = await fetch(url, { headers: AUTH, signal: AbortSignal.timeout(120_000) });
    const text = await response.text();
    if (url.endsWith('/metrics')) lag.note(text);
    return { status: response.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

interface PhaseResult {
  deliveries: Distribution & { statuses: Record<string, number> };
  loopLag: { maxMs: number | null; p99Ms: number | null; scrapes: number };
  reads: { count: number; perSecond: number | null; statuses: Record<string, number>; meanMsByPage: Record<string, number | null> };
}

const statuses = (answers: readonly Timed[]) => {
  const by: Record<string, number> = {};
  for (const a of answers) by[String(a.status)] = (by[String(a.status)] ?? 0) + 1;
  return by;
};

/** A read loop: the pages in turn, as fast as they answer, until `ends`. */
async function readLoop(url: string, pages: readonly Page[], lag: LoopLag, ends: number, into: Map<string, Timed[]>) {
  for (let i = 0; Date.now() < ends; i++) {
    const page = pages[i % pages.length]!;
    const answer = await get(`${url}${page.path}`, lag);
    into.set(page.name, [...(into.get(page.name) ?? []), answer]);
  }
}

/** One phase: a delivery every `everyMs` for the phase's seconds, with the read loops or alone, and /metrics every 500 ms. */
async function phase(url: string, pages: readonly Page[], readers: number, first: number): Promise<PhaseResult> {
  const withReads = readers > 0;
  const lag = new LoopLag();
  await get(`${url}/metrics`, lag); // a new window from here
  lag.maxMs = lag.p99Ms = lag.scrapes = 0;
  const ends = Date.now() + settings.phaseSeconds * 1000;
  const reads = new Map<string, Timed[]>();
  const loops = withReads ? Array.from({ length: readers }, () => readLoop(url, pages, lag, ends, reads)) : [];
  const sampler = (async () => {
    while (Date.now() < ends) {
      await get(`${url}/metrics`, lag);
      await delay(500);
    }
  })();
  const sent: Array<Promise<Timed>> = [];
  for (let n = first; Date.now() < ends; n++) {
    sent.push(deliver(url, n));
    await delay(settings.everyMs);
  }
  const deliveries = await Promise.all(sent);
  await Promise.all([...loops, sampler]);
  const all = [...reads.values()].flat();
  return {
    deliveries: { ...distribution(deliveries.map((d) => d.ms)), statuses: statuses(deliveries) },
    loopLag: { maxMs: round(lag.maxMs), p99Ms: round(lag.p99Ms), scrapes: lag.scrapes },
    reads: {
      count: all.length,
      perSecond: withReads ? round(all.length / settings.phaseSeconds) : null,
      statuses: statuses(all),
      meanMsByPage: Object.fromEntries(
        [...reads].map(([name, answers]) => [name, round(answers.reduce((s, a) => s + a.ms, 0) / answers.length)]),
      ),
    },
  };
}

function report(target: Target, alone: PhaseResult, withReads: PhaseResult, readers: number): void {
  const ms = (x: number | null | undefined) => (x === null || x === undefined ? '-' : `${round(x)} ms`);
  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? `×${round(b / a, 2)}` : '-');
  const row = (label: string, a: number | null | undefined, b: number | null | undefined) =>
    console.log(
      `  ${label.padEnd(24)} ${ms(a).padStart(11)} ${ms(b).padStart(11)} ${ms(a === undefined || a === null || b === undefined || b === null ? null : b - a).padStart(11)} ${ratio(a, b).padStart(8)}`,
    );
  const engine = target.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  console.log(
    `operator reads: serve (${relative(ROOT, DIST)}) on ${engine}, ${settings.events} events; a signed delivery every ${settings.everyMs} ms, ${settings.phaseSeconds} s a phase; ${readers} read loop(s)`,
  );
  console.log(`  ${''.padEnd(24)} ${'alone'.padStart(11)} ${'with reads'.padStart(11)} ${'added'.padStart(11)} ${'ratio'.padStart(8)}`);
  row('delivery p50', alone.deliveries.p50, withReads.deliveries.p50);
  row('delivery p99', alone.deliveries.p99, withReads.deliveries.p99);
  row('delivery max', alone.deliveries.max, withReads.deliveries.max);
  row('event-loop lag p99', alone.loopLag.p99Ms, withReads.loopLag.p99Ms);
  row('event-loop lag max', alone.loopLag.maxMs, withReads.loopLag.maxMs);
  console.log(
    `  deliveries ${JSON.stringify(alone.deliveries.statuses)} / ${JSON.stringify(withReads.deliveries.statuses)}; console reads ${withReads.reads.count} (${withReads.reads.perSecond}/s) ${JSON.stringify(withReads.reads.statuses)}`,
  );
  console.log(`  mean read by page: ${JSON.stringify(withReads.reads.meanMsByPage)}`);
  const added = (withReads.deliveries.p99 ?? 0) - (alone.deliveries.p99 ?? 0);
  console.log(`  goal: at most 20 ms added to the p99: ${round(added)} ms added, ${added <= 20 ? 'met' : 'NOT met'}`);
}

function reportMigration(m: CountersMigration): void {
  console.log(
    `  counters migration applied again to the loaded database: ${m.heldMs} ms under its locks (${m.perMillionRowsMs} ms a million inbox rows, ${m.inboxRows} rows; the counting ${m.countingMs} ms)`,
  );
  console.log(
    `  deliveries meanwhile: ${JSON.stringify(m.deliveries.statuses)}, p50 ${round(m.deliveries.p50)} ms, max ${round(m.deliveries.max)} ms`,
  );
}

/** Serve on the target: warm, the two phases, then (PostgreSQL, when asked) the counters migration under deliveries. */
async function measure(target: Target) {
  const server = await startServer({
    name: 'serve',
    command: process.execPath,
    args: [
      // --profile: serve's threads under the V8 profiler (a file each, in bench/tmp/operator-reads/profile).
      ...(flags.profile ? ['--cpu-prof', '--cpu-prof-dir', join(TMP, 'profile')] : []),
      CLI,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--db',
      target.db,
      '--secret',
      SECRET,
      '--dashboard-token',
      TOKEN,
      '--log-level',
      'warn',
    ],
    logFile: join(TMP, `serve-${target.engine}.log`),
  });
  try {
    // Warm: the first delivery and a round of every page (prepared statements, page caches).
    await deliver(server.url, 0);
    for (const page of target.pages) await get(`${server.url}${page.path}`, new LoopLag());
    const alone = await phase(server.url, target.pages, 0, 1);
    const byReaders: Record<string, PhaseResult> = {};
    for (const [i, readers] of settings.readers.entries()) {
      byReaders[readers] = await phase(server.url, target.pages, readers, 1_000_000 * (i + 1));
      report(target, alone, byReaders[readers], readers);
    }
    const withReads = byReaders[settings.readers[0]!]!;
    let countersMigration: CountersMigration | undefined;
    if (target.engine === 'postgres' && flags['counters-migration']) {
      countersMigration = await measureCountersMigration(target.db, (n) => deliver(server.url, n), settings.everyMs);
      reportMigration(countersMigration);
    }
    return { alone, withReads, ...(settings.readers.length > 1 && { byReaders }), ...(countersMigration && { countersMigration }) };
  } finally {
    await server.stop();
  }
}

async function run(): Promise<void> {
  mkdirSync(TMP, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  for (const engine of engines) {
    const target = engine === 'sqlite' ? await sqliteTarget() : await postgresTarget();
    try {
      const measured = await measure(target);
      const results = {
        machine: machineInfo(ROOT, TMP),
        git: gitInfo(ROOT),
        dist: relative(ROOT, DIST),
        engine,
        ...(target.server && { server: target.server }),
        settings,
        ...(target.loaded && { loaded: target.loaded }),
        ...measured,
      };
      const name = `operator-reads${engine === 'postgres' ? '-postgres' : ''}${flags.label ? `-${flags.label}` : ''}.json`;
      writeFileSync(join(RESULTS, name), `${JSON.stringify(results, null, 2)}\n`);
    } finally {
      await target.release();
    }
  }
}

try {
  await run();
} finally {
  killLeftovers();
}
