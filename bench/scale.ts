#!/usr/bin/env node
// Whether what a user waits for grows with what the database holds: `npm run bench:scale` (builds,
// then node build/bench/scale.js; --events N, default 10,000,000; --rounds 3, --duration 8,
// --warmup 2, --requests 7, --connections 50, --profile: one more ingest round of each side under
// node --cpu-prof, outside the figures, and their functions' CPU a request side by side;
// --bytes-only: only the inserts and the bytes, in bench/results/scale-bytes.json;
// --postgres-events N, default 1,000,000, 0 for none: PostgreSQL's bytes on a stream of
// min(N, --events) events, when the machine has PostgreSQL, bench/lib/scale-postgres.ts).
//
// A big SQLite database of N distinct events (bench/lib/scale-database.ts: the replay scenario
// loaded by `prequal-hooks replay`, with dead letters and handler failures; cached in bench/tmp/scale
// by N and schema version) is copied, and every figure is measured on the copy and on a baseline
// made in the same run: an empty database holding only the one campaign (its ~500 events) the
// console's campaign and candidate pages show, so that both render the same page. Each figure is
// printed beside the baseline's, with the ratio and the goal:
//   serve start to /readyz 200; each console page and /metrics (first, median, max of --requests);
//   the CLI's inspect, dead-letters, export and erase of one candidate (wall time, median of 3);
//   ingest: serve's 2xx/s and CPU µs a request under autocannon, rounds alternating big / baseline;
//   pages written per insert by b-tree (WAL frames of intake-and-projection commits, named by dbstat);
//   bytes a stored event, by table and index (dbstat); PostgreSQL's beside them, by relation.
// Results: a table on stdout, JSON in bench/results/scale.json.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRequestPool, fire, summariseRun, type RequestPool } from './lib/load.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { cpuMicros, killLeftovers, measureCommand } from './lib/processes.js';
import { snapshotBuild, type FrozenBuild } from './lib/snapshot.js';
import { removeDatabase } from './lib/database.js';
import { ensureBigDatabase, eventStream, writeFirstCampaign, type BigDatabase } from './lib/scale-database.js';
import { inboxColumnBytes, measureInserts, walkBtrees, type BtreeBytes, type InsertCost } from './lib/scale-pages.js';
import { SECRET, startServe, timePage, type PageTiming } from './lib/scale-serve.js';
import { median, round } from './lib/stats.js';
import { summariseProfile } from './profile-summary.js';
import { measurePostgresScale, postgresAvailable, postgresTable, type PostgresScale } from './lib/scale-postgres.js';
import type { ProfileRow, ProfileSummary } from './lib/types.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    requests: { type: 'string', default: '7' },
    connections: { type: 'string', default: '50' },
    'insert-batches': { type: 'string', default: '40' },
    profile: { type: 'boolean', default: false },
    'make-only': { type: 'boolean', default: false },
    'bytes-only': { type: 'boolean', default: false },
    'postgres-events': { type: 'string', default: '1000000' },
  },
});
const settings = {
  events: Number(flags.events),
  rounds: Number(flags.rounds),
  durationSec: Number(flags.duration),
  warmupSec: Number(flags.warmup),
  requests: Number(flags.requests),
  connections: Number(flags.connections),
  insertBatches: Number(flags['insert-batches']),
  insertBatchSize: 50,
  /** PostgreSQL's replay is several times slower than SQLite's bulk load: it gets at most this many events (0: none). */
  postgresEvents: Math.min(Number(flags.events), Number(flags['postgres-events'])),
};

const CACHE = join(BENCH_TMP, 'scale');
// --make-only makes (or upgrades) the cached database and stops, in a folder of its own, so that it
// can run beside a measuring run on a smaller database.
const RUN = join(CACHE, flags['make-only'] ? `make-${process.pid}` : 'run');
const log = (message: string): void => {
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
};

type Side = 'big' | 'empty';
/** One figure on both databases: the big one's, the baseline's, their ratio, and the goal it is held to. */
interface Figure {
  figure: string;
  unit: string;
  big: number | null;
  empty: number | null;
  ratio: number | null;
  goal: string;
  meetsGoal: boolean | null;
}

const ratio = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || a === undefined || b === null || b === undefined || b === 0 ? null : round(a / b, 2);

function figure(name: string, unit: string, big: number | null, empty: number | null, goal: string, meets: boolean | null): Figure {
  return { figure: name, unit, big: round(big, 1), empty: round(empty, 1), ratio: ratio(big, empty), goal, meetsGoal: meets };
}

interface Subject {
  campaignId: string;
  candidateId: string;
}

/** The console's pages an operator opens, and /metrics. */
const pagesOf = ({ campaignId, candidateId }: Subject): Array<[label: string, path: string]> => [
  ['overview', '/dashboard/'],
  ['campaigns', '/dashboard/campaigns'],
  ['candidates list', `/dashboard/campaigns/${encodeURIComponent(campaignId)}`],
  ['candidate detail', `/dashboard/candidates/${encodeURIComponent(candidateId)}`],
  ['events list', '/dashboard/events'],
  ['events of a campaign', `/dashboard/events?campaign=${encodeURIComponent(campaignId)}`],
  ['events of a kind', '/dashboard/events?kind=credits.low'],
  ['dead letters', '/dashboard/dead-letters'],
  ['accounts', '/dashboard/accounts'],
  ['GET /metrics', '/metrics'],
];

/** Serve's start to /readyz 200, `rounds` times on each side, alternating. */
async function measureStartup(code: FrozenBuild, dbs: Record<Side, string>): Promise<Record<Side, number[]>> {
  const times: Record<Side, number[]> = { big: [], empty: [] };
  for (let n = 0; n < settings.rounds; n++) {
    for (const side of n % 2 === 0 ? (['big', 'empty'] as const) : (['empty', 'big'] as const)) {
      const { server, readyMs } = await startServe(code, dbs[side], `start-${side}-${n}`);
      await server.stop();
      times[side].push(readyMs);
      log(`start ${side} ${n + 1}: ready in ${Math.round(readyMs)} ms`);
    }
  }
  return times;
}

async function measurePages(code: FrozenBuild, db: string, side: Side, subject: Subject): Promise<PageTiming[]> {
  const { server } = await startServe(code, db, `pages-${side}`);
  try {
    const timings: PageTiming[] = [];
    for (const [label, path] of pagesOf(subject)) {
      const t = await timePage(server.url, path, settings.requests);
      timings.push(t);
      log(`${side} ${label}: ${t.status}, ${t.bytes} B, first ${t.firstMs} ms, median ${t.medianMs} ms, max ${t.maxMs} ms`);
    }
    return timings;
  } finally {
    await server.stop();
  }
}

/** The CLI commands of one person's and the operator's day, with their arguments. */
const commandsOf = ({ candidateId }: Subject): Array<[label: string, args: string[]]> => [
  ['inspect', ['inspect', '--json']],
  ['dead-letters', ['dead-letters', '--json']],
  ['export --candidate', ['export', '--candidate', candidateId]],
  ['erase --candidate --dry-run', ['erase', '--candidate', candidateId, '--reason', 'bench', '--dry-run', '--json']],
];

/** Each command's wall time (ms) on each side, 3 runs alternating; then one real erase on each (it changes the copy). */
async function measureCommands(code: FrozenBuild, dbs: Record<Side, string>, subject: Subject) {
  const run = async (db: string, args: string[]): Promise<number> => {
    const result = await measureCommand(process.execPath, [code.cli, ...args, '--db', db], { cwd: ROOT, env: { BENCH_DIST: code.dist } });
    if (result.code !== 0) throw new Error(`prequal-hooks ${args.join(' ')} exited with ${result.code}:\n${result.stderr.slice(-2000)}`);
    return result.wallMs;
  };
  const commands = [
    ...commandsOf(subject),
    ['erase --candidate (real, on the copy)', ['erase', '--candidate', subject.candidateId, '--reason', 'bench', '--json']] as [
      string,
      string[],
    ],
  ];
  const out: Array<{ label: string } & Record<Side, number[]>> = [];
  for (const [label, args] of commands) {
    const times: Record<Side, number[]> = { big: [], empty: [] };
    const runs = args.includes('--dry-run') || args[0] !== 'erase' ? 3 : 1;
    for (let n = 0; n < runs; n++)
      for (const side of n % 2 === 0 ? (['big', 'empty'] as const) : (['empty', 'big'] as const))
        times[side].push(await run(dbs[side], args));
    log(`${label}: big ${times.big.map(Math.round).join(', ')} ms; empty ${times.empty.map(Math.round).join(', ')} ms`);
    out.push({ label, ...times });
  }
  return out;
}

interface IngestRound {
  side: Side;
  round: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number | null;
  non2xx: number;
}

/** One ingest round of one side: a fresh server, warm-up, the measured run; `profile`: under node --cpu-prof, to that file. */
async function ingestRound(
  code: FrozenBuild,
  db: string,
  side: Side,
  n: number,
  load: { pool: RequestPool; cursor: { next: number } },
  profile?: string,
) {
  const nodeOptions = profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', RUN, '--cpu-prof-name', profile.slice(RUN.length + 1)];
  const { server } = await startServe(code, db, `ingest-${side}-${n}`, nodeOptions);
  try {
    const common = { url: server.url, ...load, headerStyle: 'service' as const, connections: settings.connections };
    const warmup = await fire({ ...common, durationSec: settings.warmupSec });
    const before = cpuMicros(server.pid);
    const run = summariseRun(await fire({ ...common, durationSec: settings.durationSec }));
    const after = cpuMicros(server.pid);
    const cpu = before !== null && after !== null && run.ok > 0 ? Math.round((after - before) / run.ok) : null;
    const round: IngestRound = {
      side,
      round: n + 1,
      requestsPerSec: run.requestsPerSec,
      p50Ms: run.p50Ms,
      p99Ms: run.p99Ms,
      cpuUsPerRequest: cpu,
      non2xx: run.non2xx,
    };
    return { round, requests: warmup['2xx'] + run.ok };
  } finally {
    await server.stop();
  }
}

/**
 * Serve under load, rounds alternating big / baseline; the big side keeps its copy, the baseline
 * gets a fresh one each round. With --profile, one more round of each side under the profiler,
 * outside the figures (the profiler costs CPU of its own).
 */
async function measureIngest(code: FrozenBuild, dbs: Record<Side, string>, template: string) {
  const load = { pool: createRequestPool({ secret: SECRET, size: 20_000 }), cursor: { next: 0 } };
  const rounds: IngestRound[] = [];
  for (let n = 0; n < settings.rounds; n++) {
    for (const side of n % 2 === 0 ? (['big', 'empty'] as const) : (['empty', 'big'] as const)) {
      if (side === 'empty') copyDatabase(template, dbs.empty);
      const { round: r } = await ingestRound(code, dbs[side], side, n, load);
      log(
        `ingest ${side} ${n + 1}: ${Math.round(r.requestsPerSec)} req/s, p99 ${r.p99Ms} ms, ${r.cpuUsPerRequest} µs CPU/req, ${r.non2xx} non-2xx`,
      );
      rounds.push(r);
    }
  }
  const profiles: Array<{ side: Side; file: string; requests: number }> = [];
  if (flags.profile)
    for (const side of ['big', 'empty'] as const) {
      if (side === 'empty') copyDatabase(template, dbs.empty);
      const file = join(RUN, `ingest-${side}.cpuprofile`);
      const { requests } = await ingestRound(code, dbs[side], side, settings.rounds, load, file);
      profiles.push({ side, file, requests });
    }
  return { rounds, profiles };
}

/** The big side's top functions by self time, in µs a 2xx on each side (each profile over its server's life). */
function compareProfiles(profiles: Array<{ side: Side; file: string; requests: number }>) {
  const big = profiles.find((p) => p.side === 'big');
  const empty = profiles.find((p) => p.side === 'empty');
  if (big === undefined || empty === undefined) return undefined;
  const summaries = { big: summariseProfile(big.file, 200), empty: summariseProfile(empty.file, 200) };
  const perRequest = (rows: ProfileRow[], requests: number) =>
    new Map(rows.map((r) => [r.name.replace(/ \S+:\d+$/, (m) => m.replace(/^ .*\/dist\//, ' dist/')), (r.selfMs * 1000) / requests]));
  const b = perRequest(summaries.big.topFunctions, big.requests);
  const e = perRequest(summaries.empty.topFunctions, empty.requests);
  const rows = [...b]
    .filter(([name]) => name !== '(idle)')
    .sort((x, y) => y[1] - x[1])
    .slice(0, 20)
    .map(([name, us]) => ({ name, bigUs: round(us, 1), emptyUs: round(e.get(name) ?? 0, 1) }));
  // The profiler samples the idle loop too: CPU is the rest.
  const busyUs = (s: ProfileSummary, requests: number) =>
    round(((s.totalMs - (s.topFunctions.find((r) => r.name === '(idle)')?.selfMs ?? 0)) * 1000) / requests, 1);
  return {
    requests: { big: big.requests, empty: empty.requests },
    totalUs: { big: busyUs(summaries.big, big.requests), empty: busyUs(summaries.empty, empty.requests) },
    topFunctions: rows,
    big: summaries.big,
    empty: summaries.empty,
  };
}

function copyDatabase(from: string, to: string): void {
  removeDatabase(to);
  copyFileSync(from, to);
}

/** The baseline: a new database holding the first campaign's events, loaded as the big one was. */
async function makeBaseline(code: FrozenBuild): Promise<{ template: string; subject: Subject; events: number }> {
  const events = join(RUN, 'first-campaign.ndjson');
  const { campaignId, candidateId, events: count } = writeFirstCampaign(events);
  const template = join(RUN, 'baseline-template.db');
  const run = await measureCommand(process.execPath, [code.cli, 'replay', events, '--db', template, '--json'], {
    env: { BENCH_DIST: code.dist },
  });
  if (run.code !== 0) throw new Error(`replay of the baseline failed:\n${run.stderr}`);
  return { template, subject: { campaignId, candidateId }, events: count };
}

/** Pages written per insert on each side, and the b-trees' bytes (the big side's walk is over every page). */
function measureStorage(dbs: Record<Side, string>) {
  const sides = {} as Record<Side, { cost: InsertCost; btrees: BtreeBytes[]; inboxColumns: Record<string, number>; inboxRows: number }>;
  for (const side of ['empty', 'big'] as const) {
    const started = performance.now();
    const { cost, result } = measureInserts(
      dbs[side],
      { batches: settings.insertBatches, batchSize: settings.insertBatchSize },
      (db, frames) => ({
        ...walkBtrees(db, frames, settings.insertBatches * settings.insertBatchSize),
        inboxColumns: inboxColumnBytes(db, 20_000),
        inboxRows: db.prepare("SELECT COALESCE(SUM(n), 0) FROM counters WHERE name = 'inbox'").pluck().get() as number,
      }),
    );
    sides[side] = {
      cost: { ...cost, pagesPerInsertByBtree: result.pagesPerInsertByBtree },
      btrees: result.btrees,
      inboxColumns: result.inboxColumns,
      inboxRows: result.inboxRows,
    };
    log(
      `${side}: ${round(cost.msPerInsert, 3)} ms and ${round(cost.pagesPerInsert, 2)} pages an insert (walk ${Math.round(performance.now() - started)} ms)`,
    );
  }
  return sides;
}

/**
 * Bytes a stored event: the cached file over N; each b-tree of the copy (which the ingest rounds
 * and inserts made larger) over the copy's inbox rows, grouped by table.
 */
function bytesPerEvent(big: BigDatabase, btrees: BtreeBytes[], rows: number) {
  const perEvent = (bytes: number) => round(bytes / rows, 1);
  const byTable = new Map<string, number>();
  for (const b of btrees) byTable.set(b.table, (byTable.get(b.table) ?? 0) + b.bytes);
  return {
    fileBytes: big.bytes,
    perEvent: round(big.bytes / big.events, 1),
    copyInboxRows: rows,
    byTable: Object.fromEntries([...byTable].sort((a, b) => b[1] - a[1]).map(([t, bytes]) => [t, perEvent(bytes)])),
    byBtree: btrees.map((b) => ({
      name: b.name,
      table: b.table,
      bytesPerEvent: perEvent(b.bytes),
      payloadPerEvent: perEvent(b.payload),
      unusedPerEvent: perEvent(b.unused),
      pages: b.pages,
    })),
  };
}

const mid = (xs: number[]): number | null => median(xs);

/** What serve and the CLI took on each side (not measured with --bytes-only). */
interface Timings {
  startup: Record<Side, number[]>;
  pages: Record<Side, PageTiming[]>;
  commands: Awaited<ReturnType<typeof measureCommands>>;
  ingest: Awaited<ReturnType<typeof measureIngest>>;
}

async function measureTimings(
  code: FrozenBuild,
  dbs: Record<Side, string>,
  baseline: Awaited<ReturnType<typeof makeBaseline>>,
): Promise<Timings> {
  const startup = await measureStartup(code, dbs);
  const pages = {
    big: await measurePages(code, dbs.big, 'big', baseline.subject),
    empty: await measurePages(code, dbs.empty, 'empty', baseline.subject),
  };
  const commands = await measureCommands(code, dbs, baseline.subject);
  const ingest = await measureIngest(code, dbs, baseline.template);
  return { startup, pages, commands, ingest };
}

function figures(
  timings: Timings | undefined,
  storage: ReturnType<typeof measureStorage>,
  bytes: ReturnType<typeof bytesPerEvent>,
  subject: Subject,
): Figure[] {
  const out = timings === undefined ? [] : timingFigures(timings, subject);
  out.push(figure('insert (intake + projection), SQL', 'ms', storage.big.cost.msPerInsert, storage.empty.cost.msPerInsert, '', null));
  out.push(figure('pages written an insert', 'pages', storage.big.cost.pagesPerInsert, storage.empty.cost.pagesPerInsert, '', null));
  out.push(figure('bytes a stored event', 'B', bytes.perEvent, null, '≤ 700 B', bytes.perEvent === null ? null : bytes.perEvent <= 700));
  return out;
}

function timingFigures({ startup, pages, commands, ingest: { rounds: ingest } }: Timings, subject: Subject): Figure[] {
  const out: Figure[] = [];
  const s = { big: mid(startup.big), empty: mid(startup.empty) };
  out.push(figure('serve start to /readyz 200', 'ms', s.big, s.empty, '≤ 3000 ms', s.big === null ? null : s.big <= 3000));
  pagesOf(subject).forEach(([label], i) => {
    const b = pages.big[i]!;
    const e = pages.empty[i]!;
    out.push(figure(`${label} (median)`, 'ms', b.medianMs, e.medianMs, '≤ 100 ms', b.medianMs <= 100 && b.status === 200));
    out.push(figure(`${label} (max)`, 'ms', b.maxMs, e.maxMs, '≤ 100 ms', b.maxMs <= 100));
  });
  for (const c of commands) {
    const b = mid(c.big);
    const e = mid(c.empty);
    out.push(figure(`CLI ${c.label}`, 'ms', b, e, '≤ empty + 300 ms', b === null || e === null ? null : b - e <= 300));
  }
  const side = (x: Side, pick: (r: IngestRound) => number | null) =>
    median(
      ingest
        .filter((r) => r.side === x)
        .map(pick)
        .filter((v): v is number => v !== null),
    );
  const rps = { big: side('big', (r) => r.requestsPerSec), empty: side('empty', (r) => r.requestsPerSec) };
  const cpu = { big: side('big', (r) => r.cpuUsPerRequest), empty: side('empty', (r) => r.cpuUsPerRequest) };
  const within = (r: number | null) => (r === null ? null : r >= 0.9 && r <= 1.1);
  out.push(figure('ingest 2xx/s', 'req/s', rps.big, rps.empty, '0.9–1.1×', within(ratio(rps.big, rps.empty))));
  out.push(figure('ingest CPU a request', 'µs', cpu.big, cpu.empty, '0.9–1.1×', within(ratio(cpu.big, cpu.empty))));
  return out;
}

function profileTable(p: NonNullable<ReturnType<typeof compareProfiles>>): string {
  const lines = [
    `  ingest under the profiler, CPU µs a 2xx by function (self time, server's whole life), big / empty: all ${p.totalUs.big} / ${p.totalUs.empty}`,
    ...p.topFunctions.map((r) => `    ${r.name.slice(0, 70).padEnd(72)}${String(r.bigUs).padStart(8)}${String(r.emptyUs).padStart(8)}`),
  ];
  return lines.join('\n');
}

function table(rows: Figure[]): string {
  const cell = (x: number | string | null, width: number) => String(x ?? '-').padStart(width);
  const head = `  ${'figure'.padEnd(44)}${cell('big', 11)}${cell('empty', 11)}${cell('ratio', 8)}  ${'goal'.padEnd(18)}met`;
  const lines = rows.map(
    (r) =>
      `  ${`${r.figure} (${r.unit})`.padEnd(44)}${cell(r.big, 11)}${cell(r.empty, 11)}${cell(r.ratio, 8)}  ${r.goal.padEnd(18)}${r.meetsGoal === null ? '' : r.meetsGoal ? 'yes' : 'NO'}`,
  );
  return [head, ...lines].join('\n');
}

function storageTable(storage: ReturnType<typeof measureStorage>, bytes: ReturnType<typeof bytesPerEvent>): string {
  const lines = ['  pages written an insert, by b-tree (big / empty):'];
  const names = new Set([...Object.keys(storage.big.cost.pagesPerInsertByBtree), ...Object.keys(storage.empty.cost.pagesPerInsertByBtree)]);
  for (const name of names)
    lines.push(
      `    ${name.padEnd(34)}${String(storage.big.cost.pagesPerInsertByBtree[name] ?? 0).padStart(8)}${String(storage.empty.cost.pagesPerInsertByBtree[name] ?? 0).padStart(8)}`,
    );
  lines.push(
    `  bytes a stored event: ${bytes.perEvent} (file ${Math.round(bytes.fileBytes / 2 ** 20)} MiB), by b-tree (the copy's, over its ${bytes.copyInboxRows} inbox rows):`,
  );
  for (const b of bytes.byBtree.filter((x) => (x.bytesPerEvent ?? 0) >= 0.5))
    lines.push(
      `    ${b.name.padEnd(34)}${String(b.bytesPerEvent).padStart(8)}   (payload ${b.payloadPerEvent}, unused ${b.unusedPerEvent})`,
    );
  lines.push(
    `  inbox columns, mean length() a row: ${Object.entries(storage.big.inboxColumns)
      .map(([c, n]) => `${c} ${n}`)
      .join(', ')}`,
  );
  return lines.join('\n');
}

/**
 * PostgreSQL's bytes an event, on the stream of the big database (of at most --postgres-events
 * events), when the machine has PostgreSQL; with the time its replay of every event would take.
 */
async function measurePostgres(code: FrozenBuild, events: number): Promise<(PostgresScale & { replayOfAllSec: number }) | undefined> {
  if (settings.postgresEvents <= 0) return undefined;
  if (!(await postgresAvailable(code.dist))) {
    log('no PostgreSQL binaries found: PostgreSQL is not measured');
    return undefined;
  }
  const stream = await eventStream({ events: settings.postgresEvents, dir: CACHE, log });
  try {
    const measured = await measurePostgresScale({
      dist: code.dist,
      cli: code.cli,
      files: stream.files,
      events: settings.postgresEvents,
      cwd: ROOT,
      log,
    });
    return { ...measured, replayOfAllSec: Math.round(events / measured.replay.eventsPerSec) };
  } finally {
    stream.remove();
  }
}

async function main(): Promise<void> {
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(RUN, { recursive: true });
  const machine = machineInfo(ROOT, CACHE);
  const code = snapshotBuild(ROOT, join(RUN, 'code'));
  const big = await ensureBigDatabase({ events: settings.events, dir: CACHE, cli: code.cli, env: { BENCH_DIST: code.dist }, log });
  log(
    `${big.cached ? 'cached' : 'made'}: ${big.file} (${Math.round(big.bytes / 2 ** 20)} MiB), generated in ${Math.round(big.generation.totalMs / 1000)} s ` +
      `(scenario ${Math.round(big.generation.scenarioMs / 1000)} s, replay ${Math.round(big.generation.replayMs / 1000)} s)` +
      (big.upgrades ?? []).map((u) => `; upgraded from migration ${u.from} to ${u.to} in ${(u.ms / 1000).toFixed(1)} s`).join(''),
  );
  if (flags['make-only']) {
    rmSync(RUN, { recursive: true, force: true });
    return;
  }
  const baseline = await makeBaseline(code);
  const dbs: Record<Side, string> = { big: join(RUN, 'big.db'), empty: join(RUN, 'empty.db') };
  const copyStarted = performance.now();
  copyDatabase(big.file, dbs.big);
  copyDatabase(baseline.template, dbs.empty);
  log(`copied the big database in ${Math.round(performance.now() - copyStarted)} ms`);

  const timings = flags['bytes-only'] ? undefined : await measureTimings(code, dbs, baseline);
  copyDatabase(baseline.template, dbs.empty);
  const storage = measureStorage(dbs);
  const bytes = bytesPerEvent(big, storage.big.btrees, storage.big.inboxRows);
  const profile = timings === undefined ? undefined : compareProfiles(timings.ingest.profiles);
  const postgres = await measurePostgres(code, big.events);

  const rows = figures(timings, storage, bytes, baseline.subject);
  console.log(
    `prequal-hooks at ${big.events.toLocaleString('en')} events (SQLite) beside a database of one campaign (${baseline.events} events)`,
  );
  console.log(table(rows));
  console.log(storageTable(storage, bytes));
  if (postgres)
    console.log(
      `${postgresTable(postgres, { events: big.events, ...bytes })}\n  PostgreSQL's replay of all ${big.events.toLocaleString('en')} events at that rate: about ${Math.round(postgres.replayOfAllSec / 60)} min`,
    );
  if (profile) console.log(profileTable(profile));
  machine.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const build = { distBuiltAt: code.distBuiltAt, distFingerprint: code.distFingerprint, srcFingerprint: code.srcFingerprint };
  const results = {
    date: new Date().toISOString(),
    machine,
    git: gitInfo(ROOT),
    build,
    settings,
    database: { ...big, file: big.file.replace(`${ROOT}/`, '') },
    baseline: { events: baseline.events, ...baseline.subject },
    figures: rows,
    ...(timings && { startup: timings.startup, pages: timings.pages, commands: timings.commands, ingest: timings.ingest.rounds }),
    inserts: { big: storage.big.cost, empty: storage.empty.cost },
    bytes: { ...bytes, inboxColumnsMeanLength: storage.big.inboxColumns },
    ...(postgres && { postgres }),
    ...(profile && { ingestProfile: profile }),
  };
  mkdirSync(RESULTS, { recursive: true });
  // --bytes-only measures part of the figures: its results do not replace a whole run's.
  writeFileSync(join(RESULTS, flags['bytes-only'] ? 'scale-bytes.json' : 'scale.json'), `${JSON.stringify(results, null, 2)}\n`);
  rmSync(RUN, { recursive: true, force: true });
}

try {
  await main();
} finally {
  killLeftovers();
}
