#!/usr/bin/env node
// prequal-hooks benchmarks. `npm run bench` (full) or `npm run bench -- --quick`.
//
// Every figure is printed beside a baseline measured in the same run, on the same machine:
//   throughput  five servers, each a child process, loaded by autocannon from this process over
//               loopback (50 connections, every request a distinct signed event), rounds
//               alternated (ABBA) and the median per target kept;
//   replay      a large shuffled NDJSON scenario with duplicates replayed into a new database
//               by a child process, timed and its peak RSS taken from outside;
//   lag         `prequal-hooks serve` at half its measured maximum, the time from each 2xx to
//               its projection being committed.
// Results: a table on stdout, JSON in bench/results/latest.json (full) or
// bench/tmp/latest-quick.json (quick: too short to commit).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { inboxCounts, removeDatabase } from './lib/database.js';
import { benchLag } from './lib/lag.js';
import { createRequestPool, fire, summariseRun, type RequestPool } from './lib/load.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { cpuMicros, diskBytesWritten, killLeftovers, measureCommand, startServer } from './lib/processes.js';
import { benchLocks } from './lib/locks.js';
import { benchNeighbours } from './lib/neighbours.js';
import { benchPostgresIngest, benchPostgresReplay, startBenchPostgres, type PostgresServerCommand } from './lib/postgres.js';
import { BENCH, ROOT, TMP, benchScript } from './lib/paths.js';
import { benchReplay, ensureScenario, replayCommand } from './lib/replay.js';
import { snapshotBuild } from './lib/snapshot.js';
import { median, round } from './lib/stats.js';
import type {
  BenchResults,
  LagResult,
  ReplayResult,
  ServerCommand,
  ServerProfile,
  ReplayProfile,
  Settings,
  Target,
  TargetId,
  TargetResult,
  ThroughputRound,
  Verdict,
} from './lib/types.js';
import { formatSummary, summariseProfile } from './profile-summary.js';

const SECRET = 'bench-secret-5b1f0c2e9d';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    'replay-events': { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (flags.help) {
  console.log(`Usage: npm run bench -- [options]

  --quick               short rounds (2 x 3 s), 100,000-event replay, 4 s of lag: for development
  --profile             afterwards, profile (node --cpu-prof) the prequal-hooks servers during one
                        round each and a 100,000-event replay; top self-time frames in the results
  --only <parts>        comma-separated subset of throughput,replay,lag,locks,neighbours,postgres,profile
                        (BENCH_ORDER=serve,handwritten limits the throughput targets, for an A/B;
                        serve-warn, measured only when named: serve at --log-level warn)
                        (--only profile: just the profiles, to bench/results/profile.json)
  --rounds <n>          rounds per target (full 3, quick 2)
  --duration <s>        seconds measured per round (full 10, quick 3)
  --replay-events <n>   events in the replay scenario (full 1000000, quick 100000)
  --out <file>          results file (full: bench/results/latest.json; quick: bench/tmp/latest-quick.json)

A full-mode --only run of the same code (same src and dist fingerprints) updates those parts of
bench/results/latest.json and keeps the others, noting what was re-measured and when.`);
  process.exit(0);
}

const MODE = flags.quick ? 'quick' : 'full';
const settings: Settings = {
  mode: MODE,
  connections: 50,
  rounds: Number(flags.rounds ?? (flags.quick ? 2 : 3)),
  durationSec: Number(flags.duration ?? (flags.quick ? 3 : 10)),
  warmupSec: flags.quick ? 1 : 2,
  replayEvents: Number(flags['replay-events'] ?? (flags.quick ? 100_000 : 1_000_000)),
  replayDuplicates: 0.2,
  replaySeed: 20261120,
  lagDurationSec: flags.quick ? 4 : 15,
  lagWarmupSec: flags.quick ? 2 : 5,
  lagPollIntervalMs: 2,
};
const parts = new Set((flags.only ?? 'throughput,replay,lag,locks,neighbours,postgres').split(',').map((s) => s.trim()));
const tmpDir = TMP;
const runDir = join(tmpDir, `run-${process.pid}`);
mkdirSync(runDir, { recursive: true });
const profileOnly = parts.size === 1 && parts.has('profile');
const outFile: string =
  flags.out ??
  (profileOnly
    ? flags.quick
      ? join(tmpDir, 'profile-quick.json')
      : join(BENCH, 'results', 'profile.json')
    : flags.quick
      ? join(tmpDir, 'latest-quick.json')
      : join(BENCH, 'results', 'latest.json'));
const profiling = flags.profile || parts.has('profile');

// Every child runs the code as built when the run began (see lib/snapshot.ts).
const code = snapshotBuild(ROOT, join(runDir, 'code'));
const CLI = code.cli;
const CHILD_ENV: Record<string, string> = { BENCH_DIST: code.dist };

const log = (message: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
};

const TARGETS: Target[] = [
  { id: 'express-noop', label: '(1) Express 5 no-op route (express.raw)', script: 'servers/express-noop.js', headers: 'service' },
  {
    id: 'express-middleware',
    label: '(2) prequal-hooks Express middleware, durable',
    script: 'servers/express-middleware.js',
    headers: 'service',
    durable: true,
  },
  { id: 'serve', label: '(3) prequal-hooks serve (CLI), durable', cli: true, headers: 'service', durable: true },
  // (3) without its access log: BENCH_ORDER=serve,serve-warn gives what the log costs a request (the cpu column).
  {
    id: 'serve-warn',
    label: '(3w) serve --log-level warn (no access log)',
    cli: true,
    cliArgs: ['--log-level', 'warn'],
    headers: 'service',
    durable: true,
    onDemand: true,
  },
  { id: 'octokit', label: '(4) @octokit/webhooks createNodeMiddleware, no-op', script: 'servers/octokit.js', headers: 'github' },
  { id: 'node-http', label: '(5) bare node:http, reads body', script: 'servers/node-http.js', headers: 'service' },
  {
    id: 'handwritten',
    label: '(6) hand-written durable: Express, HMAC, one INSERT',
    script: 'servers/handwritten-durable.js',
    headers: 'service',
    durable: true,
  },
];
const byId = Object.fromEntries(TARGETS.map((t) => [t.id, t])) as Record<TargetId, Target>;

/** The command that starts a target: the real CLI for (3), a bench server otherwise. */
function serverCommand(target: Target, db: string, nodeOptions: string[] = []): ServerCommand {
  const args = target.cli
    ? [CLI, 'serve', '--port', '0', '--db', db, '--secret', SECRET, ...(target.cliArgs ?? [])]
    : [benchScript(target.script), '--port', '0', '--db', db, '--secret', SECRET];
  return { name: target.id, command: process.execPath, args, nodeOptions, env: { ...CHILD_ENV, ...target.env }, logFile: `${db}.log` };
}

/** One target for one round: fresh server (and database), warm-up, measured run. */
async function measureTarget(
  target: Target,
  pool: RequestPool,
  { label, nodeOptions = [] }: { label: string; nodeOptions?: string[] },
): Promise<ThroughputRound> {
  const db = join(runDir, `${target.id}-${label}.db`);
  removeDatabase(db);
  const server = await startServer(serverCommand(target, db, nodeOptions));
  const cursor = { next: 0 };
  const common = { url: server.url, pool, cursor, headerStyle: target.headers, connections: settings.connections };
  const warm = await fire({ ...common, durationSec: settings.warmupSec });
  const writtenBefore = diskBytesWritten(server.pid);
  const cpuBefore = cpuMicros(server.pid);
  const result: ThroughputRound = summariseRun(await fire({ ...common, durationSec: settings.durationSec }));
  const writtenAfter = diskBytesWritten(server.pid);
  const cpuAfter = cpuMicros(server.pid);
  // What a request costs the server, whatever the load generator left it: the figure behind req/s on a shared machine.
  if (cpuBefore !== null && cpuAfter !== null && result.ok > 0) result.cpuUsPerRequest = Math.round((cpuAfter - cpuBefore) / result.ok);
  // Bytes the server made the disk write (WAL, checkpoints, the file), a 2xx: what commits cost.
  if (target.durable && writtenBefore !== null && writtenAfter !== null && result.ok > 0)
    result.diskBytesPerRequest = Math.round((writtenAfter - writtenBefore) / result.ok);
  const durability: ThroughputRound['durability'] = target.durable ? { atEnd: inboxCounts(db, 'state') } : undefined;
  const exit = await server.stop();
  if (durability) {
    const after = inboxCounts(db, 'state');
    const stored = Object.values(after).reduce((a, b) => a + b, 0);
    const acknowledged = warm['2xx'] + result.ok;
    Object.assign(durability, { stored, acknowledged, everyAcknowledgedEventStored: stored >= acknowledged });
  }
  removeDatabase(db);
  if (exit.code !== 0) log(`  ${target.id} exited with ${JSON.stringify(exit)}`);
  return { ...result, ...(durability && { durability }) };
}

/** The throughput targets in the order of a first round: BENCH_ORDER's, or all of them. */
function targetOrder(): TargetId[] {
  if (!process.env.BENCH_ORDER) return ['node-http', 'express-noop', 'express-middleware', 'octokit', 'serve', 'handwritten'];
  const order = process.env.BENCH_ORDER.split(',');
  const unknown = order.filter((id) => !Object.hasOwn(byId, id));
  if (unknown.length > 0) throw new Error(`BENCH_ORDER names no target ${unknown.join(', ')}: give some of ${Object.keys(byId).join(',')}`);
  return order as TargetId[];
}

async function throughput(pool: RequestPool): Promise<Record<TargetId, TargetResult>> {
  const order = targetOrder();
  const perTarget = Object.fromEntries(TARGETS.map((t) => [t.id, []])) as unknown as Record<TargetId, ThroughputRound[]>;
  for (let round = 0; round < settings.rounds; round++) {
    // ABBA: every other round runs the targets in reverse, so drift hits A and B alike.
    const sequence = round % 2 === 0 ? order : [...order].reverse();
    for (const id of sequence) {
      const r = await measureTarget(byId[id], pool, { label: `r${round}` });
      perTarget[id].push(r);
      log(
        `round ${round + 1}/${settings.rounds} ${id.padEnd(18)} ${Math.round(r.requestsPerSec).toString().padStart(6)} req/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms${r.non2xx || r.errors ? `  non-2xx ${r.non2xx} errors ${r.errors}` : ''}`,
      );
    }
  }
  const medians = {} as Record<TargetId, TargetResult>;
  for (const [id, rounds] of Object.entries(perTarget) as [TargetId, ThroughputRound[]][]) {
    if (byId[id].onDemand && rounds.length === 0) continue;
    medians[id] = {
      label: byId[id].label,
      // Math.round(null) is 0: a target BENCH_ORDER left out reads 0 req/s, as it always has.
      requestsPerSec: Math.round(median(rounds.map((r) => r.requestsPerSec)) ?? 0),
      p50Ms: median(rounds.map((r) => r.p50Ms)),
      p99Ms: median(rounds.map((r) => r.p99Ms)),
      non2xx: rounds.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0),
      ...(rounds.some((r) => r.diskBytesPerRequest !== undefined) && {
        diskBytesPerRequest: median(rounds.map((r) => r.diskBytesPerRequest ?? Number.NaN)),
      }),
      ...(rounds.some((r) => r.cpuUsPerRequest !== undefined) && {
        cpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest ?? Number.NaN)),
      }),
      rounds,
    };
  }
  return medians;
}

async function profileServers(pool: RequestPool): Promise<Record<string, ServerProfile>> {
  const profiles: Record<string, ServerProfile> = {};
  for (const id of ['express-middleware', 'serve'] as const) {
    const dir = join(runDir, `profile-${id}`);
    mkdirSync(dir, { recursive: true });
    log(`profiling ${id} during one round (node --cpu-prof) …`);
    const r = await measureTarget(byId[id], pool, { label: 'profile', nodeOptions: ['--cpu-prof', '--cpu-prof-dir', dir] });
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) {
      profiles[id] = { error: 'no profile written' };
      continue;
    }
    const keep = join(tmpDir, 'profiles');
    mkdirSync(keep, { recursive: true });
    const kept = join(keep, `${id}-${MODE}.cpuprofile`);
    renameSync(join(dir, file), kept);
    const summary = summariseProfile(kept, 20);
    profiles[id] = {
      underProfile: { requestsPerSec: Math.round(r.requestsPerSec), p99Ms: r.p99Ms },
      file: kept.replace(`${ROOT}/`, ''),
      ...summary,
    };
    console.log(`\n# ${byId[id].label}, under --cpu-prof (${Math.round(r.requestsPerSec)} req/s)\n${formatSummary(summary)}`);
  }
  return profiles;
}

async function profileReplay(): Promise<ReplayProfile> {
  const scenario = await ensureScenario({ events: 100_000, duplicates: settings.replayDuplicates, seed: settings.replaySeed, tmpDir, log });
  const dir = join(runDir, 'profile-replay');
  mkdirSync(dir, { recursive: true });
  const db = join(runDir, 'profile-replay.db');
  log('profiling a 100,000-event replay (node --cpu-prof) …');
  const command = replayCommand(scenario.file, db, CLI);
  const run = await measureCommand(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, ...command.args], { cwd: ROOT, env: CHILD_ENV });
  removeDatabase(db);
  if (run.code !== 0) throw new Error(`profiled replay exited with ${run.code}:\n${run.stderr.slice(-2000)}`);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`the profiled replay wrote no .cpuprofile in ${dir}`);
  const kept = join(tmpDir, 'profiles', `replay-${MODE}.cpuprofile`);
  mkdirSync(join(tmpDir, 'profiles'), { recursive: true });
  renameSync(join(dir, file), kept);
  const summary = summariseProfile(kept, 20);
  console.log(
    `\n# replay of 100,000 events under --cpu-prof (${Math.round(100_000 / (run.wallMs / 1000))} events/s)\n${formatSummary(summary)}`,
  );
  return { underProfile: { eventsPerSec: Math.round(100_000 / (run.wallMs / 1000)) }, file: kept.replace(`${ROOT}/`, ''), ...summary };
}

/** The results once every part ran: what the table prints. */
type FinishedResults = BenchResults & Required<Pick<BenchResults, 'targets' | 'durations'>>;

function verdicts(results: BenchResults): Verdict[] {
  const t = results.throughput;
  const rows: Omit<Verdict, 'verdict'>[] = [];
  const add = (target: string, value: number | null, goal: string, pass: (v: number) => boolean, unit = ''): number =>
    rows.push({ target, value, goal, pass: value === null ? null : pass(value), unit });
  if (t) {
    add('(2) ÷ (1) req/s', round(t['express-middleware'].requestsPerSec / t['express-noop'].requestsPerSec, 2), '≥ 0.90', (v) => v >= 0.9);
    add(
      '(2) p99 ÷ (1) p99',
      round((t['express-middleware'].p99Ms ?? Number.NaN) / (t['express-noop'].p99Ms ?? Number.NaN), 2),
      '≤ 1.30',
      (v) => v <= 1.3,
    );
    add('(3) ÷ (4) req/s', round(t.serve.requestsPerSec / t.octokit.requestsPerSec, 2), '≥ 0.60', (v) => v >= 0.6);
  }
  const handwrittenPostgres = results.postgres?.ingest.handwritten;
  if (results.postgres && handwrittenPostgres) {
    add(
      'PostgreSQL serve ÷ hand-written',
      round(results.postgres.ingest.serve1.requestsPerSec / handwrittenPostgres.requestsPerSec, 2),
      '≥ 3',
      (v) => v >= 3,
    );
  }
  if (t) {
    if (t.handwritten?.rounds.length)
      add('(3) ÷ (6) req/s', round(t.serve.requestsPerSec / t.handwritten.requestsPerSec, 2), '≥ 4', (v) => v >= 4);
  }
  if (results.replay) {
    add('replay events/s', results.replay.eventsPerSec, '≥ 50,000', (v) => v >= 50_000);
    add('replay peak RSS', results.replay.maxRssMb, '< 150 MB', (v) => v < 150, ' MB');
    if (results.replay.costRatio !== undefined) add('replay cost/event ÷ 100k file', results.replay.costRatio, '≤ 1.30', (v) => v <= 1.3);
    const rb = results.replay.rebuild;
    if (rb) {
      add('rebuild events/s', rb.eventsPerSec, '≥ 50,000', (v) => v >= 50_000);
      add('rebuild peak RSS', rb.maxRssMb, '< 150 MB', (v) => v < 150, ' MB');
      if (rb.costRatio !== undefined) add('rebuild cost/event ÷ 100k file', rb.costRatio, '≤ 1.30', (v) => v <= 1.3);
    }
  }
  const er = results.replay?.erasure;
  if (er) {
    add(`erase 1 candidate among ${er.events.toLocaleString('en')} events`, er.one.wallMs, '< 2,000 ms', (v) => v < 2000, ' ms');
    if (er.retention)
      add(
        `retention: erase ${er.retention.candidatesErased.toLocaleString('en')} inactive`,
        er.retention.wallMs,
        'figure',
        () => true,
        ' ms',
      );
  }
  if (results.neighbours) add('neighbours: /ping p99 ratio', results.neighbours.ratio, '≤ 1.50', (v) => v <= 1.5);
  if (results.locks) {
    add('locks: slowest webhook answer', results.locks.slowestAnswerMs, '< 5,000 ms', (v) => v < 5000, ' ms');
    add('locks: slowest /healthz', results.locks.slowestHealthMs, '< 100 ms', (v) => v < 100, ' ms');
    add('locks: longest loop stall', results.locks.longestStallMs, '< 50 ms', (v) => v < 50, ' ms');
  }
  if (results.lag)
    add('lag p99 (2xx → projected), 50 % of max', round(results.lag.ackToProjected.p99, 1), '< 100 ms', (v) => v < 100, ' ms');
  if (results.lag90)
    add('lag p99 (2xx → projected), 90 % of max', round(results.lag90.ackToProjected.p99, 1), '< 50 ms', (v) => v < 50, ' ms');
  return rows.map((r) => ({ ...r, verdict: r.pass === null ? 'n/a' : r.pass ? 'PASS' : 'MISS' }));
}

function table(results: FinishedResults): string {
  const m = results.machine;
  const s = results.settings;
  const lines = [];
  const fmt = (n: number | string | null | undefined): string =>
    n === null || n === undefined ? '—' : typeof n === 'number' ? n.toLocaleString('en') : String(n);
  lines.push(`prequal-hooks benchmarks, ${s.mode} mode, ${results.date}`);
  const c = results.code;
  lines.push(
    `code: commit ${c.commit}${c.uncommittedFiles ? ` + ${c.uncommittedFiles} uncommitted files in src/ and migrations/` : ''} (src fingerprint ${c.srcFingerprint}), dist built ${c.distBuiltAt}`,
  );
  lines.push(
    `machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGb} GB, ${m.os}, Node ${m.node}, SQLite ${m.versions.sqlite}, data on ${m.dataFilesystem}; load average at start ${m.loadAverageAtStart.join(' ')}`,
  );
  if (results.throughput) {
    lines.push('');
    lines.push(
      `Throughput: autocannon in the parent process, ${s.connections} connections, loopback, distinct signed events (avg ${results.pool?.averageBytes} B);`,
    );
    lines.push(
      `${s.rounds} rounds × ${s.durationSec} s (after ${s.warmupSec} s warm-up, fresh server and database each), alternated; median of rounds.`,
    );
    lines.push(`${'target'.padEnd(50)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}   rounds (req/s)`);
    for (const id of ['express-noop', 'express-middleware', 'serve', 'serve-warn', 'octokit', 'node-http', 'handwritten'] as const) {
      const r = results.throughput[id];
      if (r === undefined) continue;
      const disk = r.diskBytesPerRequest === undefined ? '' : `  disk ${fmt(r.diskBytesPerRequest)} B/req`;
      const cpu = r.cpuUsPerRequest === undefined ? '' : `  cpu ${fmt(r.cpuUsPerRequest)} µs/req`;
      lines.push(
        `${r.label.padEnd(50)} ${fmt(r.requestsPerSec).padStart(8)} ${fmt(r.p50Ms).padStart(7)} ${fmt(r.p99Ms).padStart(7)}   ${r.rounds.map((x) => Math.round(x.requestsPerSec)).join(' / ')}${cpu}${disk}${r.non2xx ? `  (${r.non2xx} non-2xx/errors)` : ''}`,
      );
    }
  }
  if (results.replay && results.scenario) {
    const r = results.replay;
    lines.push('');
    lines.push(
      `Replay: ${fmt(r.events)} events (${fmt(results.scenario.distinct)} distinct, ${Math.round(s.replayDuplicates * 100)}% duplicates, shuffled; ${Math.round(results.scenario.bytes / 1048576)} MB) into a new database, ${r.command}`,
    );
    lines.push(
      `  ${fmt(r.eventsPerSec)} events/s (${(r.wallMs / 1000).toFixed(1)} s wall), peak RSS ${r.maxRssMb} MB (${r.rssMethod}); stored ${JSON.stringify(r.stored)}, ${fmt(r.candidates)} candidates`,
    );
  }
  if (results.replayBaseline) {
    const b = results.replayBaseline;
    lines.push(
      `  baseline, 100,000 events of the same generator in the same run: ${fmt(b.eventsPerSec)} events/s, peak RSS ${b.maxRssMb} MB; cost per event ${results.replay?.costRatio}× the baseline's`,
    );
  }
  if (results.replayBatched && results.replay) {
    const p = results.replayBatched;
    const same = results.replay.events === p.events ? results.replay : results.replayBaseline;
    lines.push(
      `  the batched path (--batched), same 100,000-event file, same run: ${fmt(p.eventsPerSec)} events/s, peak RSS ${p.maxRssMb} MB${same ? `; bulk ÷ batched ${round(same.eventsPerSec / p.eventsPerSec, 2)}` : ''}`,
    );
  }
  const rb = results.replay?.rebuild;
  if (rb) {
    const base = results.replayBaseline?.rebuild;
    lines.push(
      `Rebuild: ${rb.command}, ${fmt(rb.events)} inbox events: ${fmt(rb.eventsPerSec)} events/s (${(rb.wallMs / 1000).toFixed(1)} s wall), peak RSS ${rb.maxRssMb} MB`,
    );
    if (base)
      lines.push(
        `  baseline, the 100,000-event file's database (${fmt(base.events)} events): ${fmt(base.eventsPerSec)} events/s, peak RSS ${base.maxRssMb} MB; cost per event ${rb.costRatio}× the baseline's`,
      );
  }
  const er = results.replay?.erasure;
  if (er) {
    lines.push(
      `Erasure, on the replayed database (${fmt(er.events)} stored events, ${fmt(er.candidates)} candidates), each a CLI process timed from outside:`,
    );
    lines.push(
      `  prequal-hooks erase --candidate <one>: ${fmt(er.one.wallMs)} ms wall, ${er.one.eventsRedacted} event${er.one.eventsRedacted === 1 ? '' : 's'} redacted, peak RSS ${er.one.maxRssMb} MB`,
    );
    lines.push(
      `  baselines, same run: the CLI starting and exiting (--version) ${fmt(er.baselines.cliStartMs)} ms; every stored body scanned for the id (no index) ${fmt(er.baselines.naiveScanMs)} ms`,
    );
    if (er.retention)
      lines.push(
        `  prequal-hooks erase --inactive-for <age of the ${fmt(er.retention.candidatesErased)} least recent>: ${fmt(er.retention.wallMs)} ms wall, ${fmt(er.retention.eventsRedacted)} events redacted, peak RSS ${er.retention.maxRssMb} MB`,
      );
  }
  for (const l of [results.lag, results.lag90].filter((x): x is LagResult => x !== undefined)) {
    lines.push('');
    lines.push(
      `Lag: prequal-hooks serve at ${fmt(l.ratePerSec)} req/s (${Math.round((l.share ?? 0.5) * 100)} % of (3)) for ${l.durationSec} s after ${l.warmupSec} s of warm-up, paced sender, ${fmt(l.acknowledged)} acknowledged, ${l.neverSeen} never seen${l.measuredAt ? ` (re-measured ${l.measuredAt})` : ''}`,
    );
    lines.push(
      `  2xx → projection committed (read-only poller, ${l.pollIntervalMs} ms): p50 ${round(l.ackToProjected.p50)} ms, p99 ${round(l.ackToProjected.p99)} ms, max ${round(l.ackToProjected.max)} ms`,
    );
    lines.push(
      `  inbox received_at → processed_at: p50 ${l.receivedToProcessed.p50} ms, p99 ${l.receivedToProcessed.p99} ms; request → 2xx at this rate: p50 ${round(l.ackLatency.p50)} ms, p99 ${round(l.ackLatency.p99)} ms`,
    );
  }
  if (results.neighbours) {
    const n = results.neighbours;
    lines.push('');
    lines.push(
      `Neighbours: GET /ping of the same Express app while webhooks arrive at ${n.ratePerSec}/s, ${n.durationSec} s rounds, alternated${n.measuredAt ? ` (re-measured ${n.measuredAt})` : ''}`,
    );
    lines.push(
      `  /ping p99 beside the middleware ${n.middlewarePingP99Ms} ms, beside a no-op webhook route ${n.noopPingP99Ms} ms (median of rounds): ratio ${n.ratio}`,
    );
  }
  if (results.locks) {
    const k = results.locks;
    lines.push('');
    lines.push(
      `Locks: another connection holds SQLite's write lock for ${k.lockSec} s while ${k.senders} senders post (serve, in a child process)${k.measuredAt ? ` (re-measured ${k.measuredAt})` : ''}`,
    );
    lines.push(
      `  ${k.webhooks} webhooks answered ${JSON.stringify(k.statuses)}, slowest answer ${fmt(k.slowestAnswerMs)} ms; ${k.healthChecks} health checks, slowest ${k.slowestHealthMs} ms;`,
    );
    lines.push(
      `  longest event-loop stall ${k.longestStallMs} ms; after the release: ${k.afterRelease.join(' ')}, pending ${k.pendingAfterRelease}, every 2xx stored: ${k.everyAcknowledgedStored}`,
    );
  }
  if (results.postgres) {
    const p = results.postgres;
    const sqlite = results.throughput?.serve;
    lines.push('');
    lines.push(
      `PostgreSQL: ${p.server}; same pool of signed events, ${s.rounds} rounds × ${s.durationSec} s, a new database each round${p.measuredAt ? ` (re-measured ${p.measuredAt})` : ''}`,
    );
    for (const r of [p.ingest.serve1, p.ingest.serve2]) {
      const ratio = sqlite ? ` (÷ (3) SQLite serve: ${round(r.requestsPerSec / sqlite.requestsPerSec, 2)})` : '';
      lines.push(
        `  ${`${r.processes} serve process${r.processes > 1 ? 'es' : ''}, one database`.padEnd(36)} ${fmt(r.requestsPerSec).padStart(8)} req/s  p50 ${fmt(r.p50Ms)} ms  p99 ${fmt(r.p99Ms)} ms${r.cpuUsPerRequest ? `  cpu ${fmt(r.cpuUsPerRequest)} µs/req` : ''}${ratio}; every 2xx stored: ${r.everyAcknowledgedEventStored}`,
      );
    }
    if (p.ingest.handwritten) {
      const h = p.ingest.handwritten;
      lines.push(
        `  ${'hand-written: Express, HMAC, one pg INSERT'.padEnd(36)} ${fmt(h.requestsPerSec).padStart(8)} req/s  p50 ${fmt(h.p50Ms)} ms  p99 ${fmt(h.p99Ms)} ms${h.cpuUsPerRequest ? `  cpu ${fmt(h.cpuUsPerRequest)} µs/req` : ''}; serve ÷ it: ${round(p.ingest.serve1.requestsPerSec / h.requestsPerSec, 2)}`,
      );
    }
    const replayRatio = results.replay ? ` (÷ SQLite replay: ${round(p.replay.eventsPerSec / results.replay.eventsPerSec, 2)})` : '';
    lines.push(
      `  replay of ${fmt(p.replay.events)} events into PostgreSQL: ${fmt(p.replay.eventsPerSec)} events/s${replayRatio}, peak RSS ${p.replay.maxRssMb} MB; stored ${JSON.stringify(p.replay.stored)}`,
    );
  }
  lines.push('');
  lines.push(`${'target'.padEnd(28)} ${'measured'.padStart(10)} ${'goal'.padStart(10)}  verdict`);
  for (const v of results.targets)
    lines.push(`${v.target.padEnd(28)} ${(fmt(v.value) + v.unit).padStart(10)} ${v.goal.padStart(10)}  ${v.verdict}`);
  lines.push('');
  lines.push(
    `total ${Math.round(results.durations.totalSec ?? 0)} s (${Object.entries(results.durations)
      .filter(([k]) => k !== 'totalSec')
      .map(([k, v]) => `${k} ${Math.round(v ?? 0)} s`)
      .join(', ')}); reproduce: npm run bench${s.mode === 'quick' ? ' -- --quick' : ''}`,
  );
  return lines.join('\n');
}

type Timed = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

/** The replay part: the scenario, its replay (with rebuild and erasure), and its baselines. */
async function replayParts(results: BenchResults, timed: Timed): Promise<void> {
  const scenario = await timed('scenario', () =>
    ensureScenario({ events: settings.replayEvents, duplicates: settings.replayDuplicates, seed: settings.replaySeed, tmpDir, log }),
  );
  results.scenario = {
    file: scenario.file.replace(`${ROOT}/`, ''),
    cached: scenario.cached,
    ...scenario.meta,
    ...(scenario.generation && { generation: scenario.generation }),
  };
  log(`replaying ${settings.replayEvents.toLocaleString('en')} events …`);
  // Not batched: never null.
  const replay = (await timed('replay', () =>
    benchReplay({ scenario, tmpDir: runDir, cli: CLI, env: CHILD_ENV, rebuild: true, erasure: true }),
  )) as ReplayResult;
  results.replay = replay;
  log(`replay: ${replay.eventsPerSec} events/s, peak RSS ${replay.maxRssMb} MB`);
  if (replay.rebuild) log(`rebuild: ${replay.rebuild.eventsPerSec} events/s, peak RSS ${replay.rebuild.maxRssMb} MB`);
  // The baseline of the growth target: the same generator's 100,000-event file, in the same run.
  if (settings.replayEvents > 100_000) {
    const small = await ensureScenario({ events: 100_000, duplicates: settings.replayDuplicates, seed: settings.replaySeed, tmpDir, log });
    log('replaying the 100,000-event baseline …');
    const base = (await timed('replay-baseline', () =>
      benchReplay({ scenario: small, tmpDir: runDir, cli: CLI, env: CHILD_ENV, rebuild: true }),
    )) as ReplayResult;
    results.replayBaseline = {
      events: base.events,
      wallMs: base.wallMs,
      eventsPerSec: base.eventsPerSec,
      maxRssMb: base.maxRssMb,
      ...(base.rebuild && { rebuild: base.rebuild }),
    };
    // Cost per event: wall time per event, large file over small file.
    replay.costRatio = round(replay.wallMs / replay.events / (base.wallMs / base.events), 2);
    if (replay.rebuild && base.rebuild) {
      replay.rebuild.costRatio = round(replay.rebuild.wallMs / replay.rebuild.events / (base.rebuild.wallMs / base.rebuild.events), 2);
    }
  }
  // The bulk load's own baseline: the batched path (what a database that holds events takes),
  // on the 100,000-event file, in the same run.
  const small = await ensureScenario({ events: 100_000, duplicates: settings.replayDuplicates, seed: settings.replaySeed, tmpDir, log });
  log('replaying the 100,000-event file by the batched path …');
  const batched = await timed('replay-batched', () =>
    benchReplay({ scenario: small, tmpDir: runDir, cli: CLI, env: CHILD_ENV, batched: true }),
  );
  if (batched)
    results.replayBatched = {
      events: batched.events,
      wallMs: batched.wallMs,
      eventsPerSec: batched.eventsPerSec,
      maxRssMb: batched.maxRssMb,
    };
}

/** Lag at half the maximum of (3) (the first target), then at 90 % of it (the second). */
async function lagParts(results: BenchResults, previous: BenchResults | null, pool: RequestPool, timed: Timed): Promise<void> {
  let maximum = results.throughput?.serve.requestsPerSec ?? previous?.throughput?.serve.requestsPerSec;
  if (!maximum) {
    log('measuring the maximum of (3) for the lag rate …');
    const r = await measureTarget(byId.serve, pool, { label: 'lag-max' });
    maximum = r.requestsPerSec;
  }
  for (const [key, share] of [
    ['lag', 0.5],
    ['lag90', 0.9],
  ] as const) {
    const ratePerSec = maximum * share;
    log(`lag at ${Math.round(ratePerSec)} req/s (${share * 100} % of ${Math.round(maximum)}) for ${settings.lagDurationSec} s …`);
    const lag = await timed(key, () =>
      benchLag({
        startServe: (db) => startServer(serverCommand(byId.serve, db)),
        dist: code.dist,
        pool,
        from: 0,
        ratePerSec,
        durationSec: settings.lagDurationSec,
        warmupSec: settings.lagWarmupSec,
        tmpDir: runDir,
        pollIntervalMs: settings.lagPollIntervalMs,
      }),
    );
    lag.share = share;
    lag.maximum = Math.round(maximum);
    results[key] = lag;
  }
}

async function locksPart(pool: RequestPool, timed: Timed): Promise<BenchResults['locks']> {
  const db = join(runDir, 'locks.db');
  removeDatabase(db);
  log(`another connection holds the write lock for ${flags.quick ? 4 : 10} s while 8 senders post …`);
  const locks = await timed('locks', () =>
    benchLocks({
      command: {
        name: 'serve-stalls',
        command: process.execPath,
        args: [benchScript('servers/serve-stalls.js'), '--port', '0', '--db', db, '--secret', SECRET],
        env: CHILD_ENV,
        logFile: `${db}.log`,
      },
      db,
      pool,
      lockSec: flags.quick ? 4 : 10,
    }),
  );
  removeDatabase(db);
  return locks;
}

function neighboursPart(pool: RequestPool, timed: Timed): Promise<BenchResults['neighbours']> {
  const ratePerSec = 500;
  log(`neighbours: GET /ping beside webhooks at ${ratePerSec}/s, middleware against a no-op route …`);
  return timed('neighbours', () =>
    benchNeighbours({
      command: (variant, round) => {
        const db = join(runDir, `neighbours-${variant}-${round}.db`);
        removeDatabase(db);
        return {
          name: `neighbours-${variant}`,
          command: process.execPath,
          args: [
            benchScript('servers/express-neighbours.js'),
            '--port',
            '0',
            '--db',
            db,
            '--secret',
            SECRET,
            ...(variant === 'noop' ? ['--noop'] : []),
          ],
          env: CHILD_ENV,
          logFile: `${db}.log`,
        };
      },
      pool,
      ratePerSec,
      durationSec: flags.quick ? 3 : 10,
      rounds: flags.quick ? 2 : 3,
    }),
  );
}

function postgresPart(pool: RequestPool, timed: Timed): Promise<BenchResults['postgres']> {
  return timed('postgres', async () => {
    const postgres = await startBenchPostgres(code.dist);
    log(`PostgreSQL ${postgres.version} (${postgres.origin}), durable: ingest through 1 and 2 serve processes, then replay …`);
    try {
      const serveCommand: PostgresServerCommand = (url, logFile) => ({
        name: 'serve-postgres',
        command: process.execPath,
        args: [CLI, 'serve', '--port', '0', '--db', url, '--secret', SECRET],
        env: CHILD_ENV,
        logFile,
      });
      const handwrittenCommand: PostgresServerCommand = (url, logFile) => ({
        name: 'handwritten-postgres',
        command: process.execPath,
        args: [benchScript('servers/handwritten-postgres.js'), '--port', '0', '--db', url, '--secret', SECRET],
        env: CHILD_ENV,
        logFile,
      });
      const ingest = await benchPostgresIngest({ postgres, serveCommand, handwrittenCommand, pool, settings, runDir, log });
      const scenario = await ensureScenario({
        events: settings.replayEvents,
        duplicates: settings.replayDuplicates,
        seed: settings.replaySeed,
        tmpDir,
        log,
      });
      log(`replaying ${settings.replayEvents.toLocaleString('en')} events into PostgreSQL …`);
      const replay = await benchPostgresReplay({ postgres, scenario, cli: CLI, env: CHILD_ENV, cwd: ROOT });
      log(`postgres replay: ${replay.eventsPerSec} events/s`);
      return { server: `PostgreSQL ${postgres.version}, ${postgres.origin}, fsync on, synchronous_commit on`, ingest, replay };
    } finally {
      await postgres.stop();
    }
  });
}

/** The results file this --only run updates: same code, full mode, default file; null otherwise. */
function previousResults(results: BenchResults): BenchResults | null {
  if (!flags.only || flags.quick || flags.out || profileOnly || !existsSync(outFile)) return null;
  const old = JSON.parse(readFileSync(outFile, 'utf8')) as Partial<BenchResults>;
  if (old.code?.srcFingerprint === results.code.srcFingerprint && old.code?.distFingerprint === results.code.distFingerprint)
    return old as BenchResults;
  throw new Error(`${outFile} holds results of other code (src ${old.code?.srcFingerprint}); run every part, or pass --out`);
}

/** The parts this run re-measured, put into the previous results, with a note of the rerun. */
function mergeInto(previous: BenchResults, results: BenchResults): void {
  const rerun = [...parts];
  const record = results as unknown as Record<string, unknown>;
  for (const part of rerun) {
    const measured = record[part];
    if (measured && typeof measured === 'object') (measured as { measuredAt?: string }).measuredAt = results.date;
  }
  const merged: Record<string, unknown> = { ...previous };
  for (const key of ['throughput', 'pool', 'scenario', 'replay', 'lag', 'locks', 'neighbours', 'postgres'])
    if (parts.has(key) || (key === 'pool' && parts.has('throughput')) || (key === 'scenario' && parts.has('replay')))
      merged[key] = record[key];
  merged.reruns = [
    ...(previous.reruns ?? []),
    { parts: rerun, date: results.date, durations: results.durations, loadAverageAtStart: results.machine.loadAverageAtStart },
  ];
  Object.assign(results, merged, {
    date: previous.date,
    durations: previous.durations,
    machine: previous.machine,
    settings: { ...previous.settings, ...settings },
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  const durations: Record<string, number> = {};
  const timed: Timed = async (name, fn) => {
    const t = performance.now();
    try {
      return await fn();
    } finally {
      durations[name] = (performance.now() - t) / 1000;
    }
  };
  const results: BenchResults = {
    date: new Date().toISOString(),
    settings,
    machine: machineInfo(ROOT, runDir),
    code: { ...gitInfo(ROOT), distBuiltAt: code.distBuiltAt, distFingerprint: code.distFingerprint, srcFingerprint: code.srcFingerprint },
  };
  log(`${MODE} mode; results to ${outFile}`);

  // A partial full run of the same code updates its parts of the existing results.
  const previous = previousResults(results);

  let pool: RequestPool | null = null;
  if (parts.has('throughput') || parts.has('lag') || parts.has('postgres') || parts.has('locks') || parts.has('neighbours') || profiling) {
    const poolSize = flags.quick ? 40_000 : 150_000;
    const built = await timed('pool', () => Promise.resolve(createRequestPool({ secret: SECRET, size: poolSize })));
    pool = built;
    results.pool = { size: built.size, averageBytes: built.averageBytes };
  }
  if (pool && parts.has('throughput')) {
    const measured = pool;
    results.throughput = await timed('throughput', () => throughput(measured));
    results.pool = { ...results.pool!, builtOnTheFly: measured.builtOnTheFly };
  }
  if (parts.has('replay')) await replayParts(results, timed);
  if (pool && parts.has('lag')) await lagParts(results, previous, pool, timed);
  if (pool && parts.has('locks')) results.locks = await locksPart(pool, timed);
  if (pool && parts.has('neighbours')) results.neighbours = await neighboursPart(pool, timed);
  if (pool && parts.has('postgres')) results.postgres = await postgresPart(pool, timed);
  if (pool && profiling) {
    const profiled = pool;
    results.profiles = await timed('profile', async () => ({ ...(await profileServers(profiled)), replay: await profileReplay() }));
  }
  durations.totalSec = (performance.now() - started) / 1000;
  results.durations = Object.fromEntries(Object.entries(durations).map(([k, v]) => [k, round(v, 1)]));
  results.machine.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  if (previous) mergeInto(previous, results);
  const targets = verdicts(results);
  results.targets = targets;
  rmSync(runDir, { recursive: true, force: true });

  mkdirSync(join(outFile, '..'), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${table({ ...results, targets, durations: results.durations ?? {} })}\n`);
  log(`written ${outFile}`);
}

main().catch((error: unknown) => {
  console.error(error);
  killLeftovers();
  rmSync(runDir, { recursive: true, force: true });
  process.exitCode = 1;
});
