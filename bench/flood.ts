#!/usr/bin/env node
// What an anonymous flood can make `prequal-hooks serve` hold: `npm run bench:flood` (about 20 s;
// builds, then node build/bench/flood.js; --connections, --seconds, --reconnect-ms). One serve
// process, loopback only, flooded by this process (bench/lib/flood.ts): connections announcing a
// body just under the 1 MiB limit with a bogus signature, sending it slowly and never its last
// byte, connecting again when cut off. Meanwhile the service's own signed deliveries, one every
// 500 ms, timed. Figures: the RSS before the flood (the baseline, same run), its peak (VmHWM) and
// once the flood has stopped; the deliveries' statuses and slowest answer.
// Then the fairness shapes (bench/lib/flood.ts, fairnessShapes: trickled bodies, bodies held whole
// but a byte over the budget, header lines over the connection cap; one address, the sender's own,
// eight 127.x addresses, an account's path), each for --shape-seconds against serve's defaults,
// with the sender's deliveries (a new connection each, from 127.0.0.1, one every 250 ms): the share
// answered 2xx and the slowest answer, beside the same sender with no flood (the baseline, same
// run).
// Then the CPU shapes (bench/lib/cpu-flood.ts: one-byte chunks from 8 addresses, pipelined bad
// signatures on 8 connections, 1 MiB bad-signature bodies from 49 addresses), each for
// --cpu-seconds against serve's defaults, the attacker in a thread of its own, with the sender's
// deliveries (a new connection each, from 127.0.0.1, one every 200 ms): the share answered 2xx
// within 5 s, p95 and slowest, serve's CPU, whether serve answers its probes and a delivery at
// once after the flood, and whether every delivery acknowledged is stored; beside the same sender
// with no flood (the baseline, same run). --only memory|fairness|cpu runs one part.
// Results: a table on stdout, JSON in bench/results/flood.json.
//   BENCH_DIST=<another build's dist folder> node build/bench/flood.js   (that version, for a before/after)
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deliverFrom, fairnessShapes, memoryOf, SENDER_ADDRESS, startFlood, type FloodStats, type SentDelivery } from './lib/flood.js';
import { cpuFloodShapes, startCpuFlood, type CpuFloodStats } from './lib/cpu-flood.js';
import { inboxCounts } from './lib/database.js';
import { gitInfo, machineInfo } from './lib/machine.js';
import { distModule, distUrl, RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { killLeftovers, startServer } from './lib/processes.js';
import { postSigned } from './lib/signed-post.js';
import { round } from './lib/stats.js';

const TMP = join(BENCH_TMP, 'flood');
const SECRET = 'bench-secret-5b1f0c2e9d';
const { values: flags } = parseArgs({
  options: {
    connections: { type: 'string', default: '600' },
    seconds: { type: 'string', default: '12' },
    'reconnect-ms': { type: 'string', default: '250' },
    'shape-seconds': { type: 'string', default: '20' },
    'cpu-seconds': { type: 'string', default: '20' },
    only: { type: 'string' },
  },
});
const settings = {
  connections: Number(flags.connections),
  seconds: Number(flags.seconds),
  reconnectMs: Number(flags['reconnect-ms']),
  bodyBytes: 1024 * 1024 - 1024,
  chunkBytes: 16 * 1024,
  tickMs: 100,
  shapeSeconds: Number(flags['shape-seconds']),
  cpuSeconds: Number(flags['cpu-seconds']),
};
const ACCOUNT_SECRET = 'bench-account-secret-0e7d13';
const { sign } = await distModule();

interface Delivery {
  status: number;
  ms: number;
}

async function deliver(url: string, n: number): Promise<Delivery> {
  const body = JSON.stringify({
    event: 'candidate.added',
    timestamp: '2026-11-20T10:00:00Z',
    data: { campaign_id: 'cmp_bench_flood', candidate_id: `cand_flood_${n}` },
  });
  const { status, ms } = await postSigned(url, body, sign(SECRET, body), 10_000);
  return { status, ms };
}

/** The flood against one serve process: memory before, at the peak and after; the deliveries meanwhile. */
async function measure(): Promise<{
  rssMb: { before: number | null; peak: number | null; after: number | null };
  deliveries: Delivery[];
  flood: FloodStats;
}> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const cli = fileURLToPath(distUrl('cli/main.js'));
  const server = await startServer({
    name: 'serve',
    command: process.execPath,
    args: [cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', join(TMP, 'hooks.db'), '--secret', SECRET, '--log-level', 'warn'],
    logFile: join(TMP, 'serve.log'),
  });
  const url = `${server.url}/webhooks`;
  try {
    await deliver(url, 0);
    const before = memoryOf(server.pid).rssMb;
    const flood = startFlood({
      url,
      connections: settings.connections,
      bodyBytes: settings.bodyBytes,
      chunkBytes: settings.chunkBytes,
      tickMs: settings.tickMs,
      reconnectMs: settings.reconnectMs,
    });
    const pending: Array<Promise<Delivery>> = [];
    for (let n = 1, ends = Date.now() + settings.seconds * 1000; Date.now() < ends; n++) {
      pending.push(deliver(url, n));
      await delay(500);
    }
    const deliveries = await Promise.all(pending);
    const stats = flood.stop();
    const peak = memoryOf(server.pid).peakMb;
    // Up to 10 s for the memory to come back, sampled: the lowest seen.
    let after = memoryOf(server.pid).rssMb;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await delay(250)) after = Math.min(after, memoryOf(server.pid).rssMb);
    return { rssMb: { before: round(before, 1), peak: round(peak, 1), after: round(after, 1) }, deliveries, flood: stats };
  } finally {
    await server.stop();
  }
}

interface ShapeResult {
  name: string;
  /** serve's log (info) while the flood held, bytes a second: the sender's access lines and the summary lines. */
  logBytesPerSecond?: number;
  deliveries: number;
  share: number;
  slowestMs: number;
  flood: FloodStats | undefined;
}

/** The sender's deliveries for `seconds`, one every 250 ms, each on a new connection from 127.0.0.1. */
async function sendFor(url: string, secret: string, seconds: number, first: number): Promise<SentDelivery[]> {
  const pending: Array<Promise<SentDelivery>> = [];
  for (let n = first, ends = Date.now() + seconds * 1000; Date.now() < ends; n++) {
    const body = JSON.stringify({
      event: 'candidate.added',
      timestamp: '2026-11-20T10:00:00Z',
      data: { campaign_id: 'cmp_bench_fair', candidate_id: `cand_fair_${n}` },
    });
    pending.push(deliverFrom(url, body, { 'content-type': 'application/json', 'x-service-signature': sign(secret, body) }, SENDER_ADDRESS));
    await delay(250);
  }
  return await Promise.all(pending);
}

function shapeResult(name: string, deliveries: SentDelivery[], flood: FloodStats | undefined): ShapeResult {
  return {
    name,
    deliveries: deliveries.length,
    share: Math.round((1000 * deliveries.filter((d) => d.status >= 200 && d.status < 300).length) / Math.max(1, deliveries.length)) / 1000,
    slowestMs: Math.round(Math.max(...deliveries.map((d) => d.ms))),
    flood,
  };
}

/** Each fairness shape against one serve with its default limits, after the sender alone (the baseline). */
async function fairness(): Promise<ShapeResult[]> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const cli = fileURLToPath(distUrl('cli/main.js'));
  const db = join(TMP, 'fair.db');
  const { execFileSync } = await import('node:child_process');
  const added = JSON.parse(
    execFileSync(process.execPath, [cli, 'accounts', 'add', '--db', db, '--account', 'north', '--secret', ACCOUNT_SECRET, '--json'], {
      encoding: 'utf8',
    }),
  ) as { webhookPath: string };
  const server = await startServer({
    name: 'serve',
    command: process.execPath,
    args: [cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', db, '--secret', SECRET],
    logFile: join(TMP, 'fair.log'),
  });
  const logBytes = () => statSync(join(TMP, 'fair.log')).size;
  const results: ShapeResult[] = [];
  try {
    const url = `${server.url}/webhooks`;
    const quiet = logBytes();
    const alone = await sendFor(url, SECRET, settings.shapeSeconds, 0);
    results.push({
      ...shapeResult('no flood (baseline)', alone, undefined),
      logBytesPerSecond: Math.round((logBytes() - quiet) / settings.shapeSeconds),
    });
    let n = 100_000;
    for (const shape of fairnessShapes()) {
      const target = shape.account === true ? `${server.url}${added.webhookPath}` : url;
      const flood = startFlood({ url: target, ...shape.flood });
      // Its steady state: every slot opened, past the first second's grace.
      for (const started = Date.now(); flood.stats().opened < shape.flood.connections || Date.now() - started < 2000;) await delay(100);
      const logged = logBytes();
      const deliveries = await sendFor(target, shape.account === true ? ACCOUNT_SECRET : SECRET, settings.shapeSeconds, n);
      n += 100_000;
      const result = shapeResult(shape.name, deliveries, flood.stop());
      results.push({ ...result, logBytesPerSecond: Math.round((logBytes() - logged) / settings.shapeSeconds) });
    }
  } finally {
    await server.stop();
  }
  return results;
}

interface CpuShapeResult {
  name: string;
  deliveries: number;
  /** Answered 2xx within 5 s, of all deliveries. */
  share: number;
  p50Ms: number;
  p95Ms: number;
  slowestMs: number;
  /** serve's CPU (all its threads) while the sender delivered, in cores. */
  serveCores: number;
  /** Right after the flood stopped: /healthz, /readyz and one delivery, with the slowest of the three. */
  after: { healthz: number; readyz: number; delivery: number; slowestMs: number } | undefined;
  flood: CpuFloodStats | undefined;
}

/** serve's CPU time so far (user + system, all threads), in seconds. */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function probe(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

/** The sender's deliveries for `seconds`, one every `everyMs`, each on a new connection from 127.0.0.1. */
async function sendEvery(url: string, everyMs: number, seconds: number, first: number): Promise<SentDelivery[]> {
  const pending: Array<Promise<SentDelivery>> = [];
  for (let n = first, ends = Date.now() + seconds * 1000; Date.now() < ends; n++) {
    const body = JSON.stringify({
      event: 'candidate.added',
      timestamp: '2026-11-20T10:00:00Z',
      data: { campaign_id: 'cmp_bench_cpu', candidate_id: `cand_cpu_${n}` },
    });
    pending.push(deliverFrom(url, body, { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, body) }, SENDER_ADDRESS));
    await delay(everyMs);
  }
  return await Promise.all(pending);
}

function cpuShapeResult(name: string, deliveries: SentDelivery[], cores: number): Omit<CpuShapeResult, 'after' | 'flood'> {
  const within = deliveries.filter((d) => d.status >= 200 && d.status < 300 && d.ms < 5000).length;
  return {
    name,
    deliveries: deliveries.length,
    share: Math.round((1000 * within) / Math.max(1, deliveries.length)) / 1000,
    p50Ms: Math.round(percentile(deliveries, 50)),
    p95Ms: Math.round(percentile(deliveries, 95)),
    slowestMs: Math.round(percentile(deliveries, 100)),
    serveCores: round(cores, 2) ?? 0,
  };
}

/** The p-th percentile of the deliveries' times (0 for none). */
function percentile(deliveries: SentDelivery[], p: number): number {
  const sorted = deliveries.map((d) => d.ms).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** Each CPU shape against one serve with its defaults, after the sender alone (the baseline); then whether every acknowledged delivery is stored. */
async function cpuFloods(): Promise<{ shapes: CpuShapeResult[]; acknowledged: number; stored: number }> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const cli = fileURLToPath(distUrl('cli/main.js'));
  const db = join(TMP, 'cpu.db');
  const server = await startServer({
    name: 'serve',
    command: process.execPath,
    args: [cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', db, '--secret', SECRET, '--log-level', 'warn'],
    logFile: join(TMP, 'cpu.log'),
  });
  const shapes: CpuShapeResult[] = [];
  let acknowledged = 0;
  try {
    const url = `${server.url}/webhooks`;
    const measured = async (first: number) => {
      const before = cpuSecondsOf(server.pid);
      const started = performance.now();
      const deliveries = await sendEvery(url, 200, settings.cpuSeconds, first);
      acknowledged += deliveries.filter((d) => d.status >= 200 && d.status < 300).length;
      return { deliveries, cores: (cpuSecondsOf(server.pid) - before) / ((performance.now() - started) / 1000) };
    };
    const alone = await measured(0);
    shapes.push({ ...cpuShapeResult('no flood (baseline)', alone.deliveries, alone.cores), after: undefined, flood: undefined });
    let n = 100_000;
    for (const shape of cpuFloodShapes()) {
      const flood = startCpuFlood({ url, ...shape.flood });
      // Its steady state: every connection opened, a second in.
      for (const started = Date.now(); flood.stats().opened < shape.flood.connections || Date.now() - started < 1000;) await delay(100);
      const { deliveries, cores } = await measured(n);
      const stats = await flood.stop();
      const [healthz, readyz, delivery] = await Promise.all([
        probe(`${server.url}/healthz`),
        probe(`${server.url}/readyz`),
        sendEvery(url, 0, 0.001, n + 99_999).then(([d]) => d!),
      ]);
      if (delivery.status >= 200 && delivery.status < 300) acknowledged++;
      n += 100_000;
      shapes.push({
        ...cpuShapeResult(shape.name, deliveries, cores),
        after: {
          healthz: healthz.status,
          readyz: readyz.status,
          delivery: delivery.status,
          slowestMs: Math.round(Math.max(healthz.ms, readyz.ms, delivery.ms)),
        },
        flood: stats,
      });
    }
  } finally {
    await server.stop();
  }
  // Only the sender's deliveries verify: every row is one of them.
  const stored = Object.values(inboxCounts(db, 'state')).reduce((sum, count) => sum + count, 0);
  return { shapes, acknowledged, stored };
}

function printCpu(cpu: Awaited<ReturnType<typeof cpuFloods>>): void {
  console.log(`cpu: serve's defaults; the sender's deliveries every 200 ms for ${settings.cpuSeconds} s a shape, a new connection each`);
  console.log(
    `  ${'shape'.padEnd(92)} ${'2xx ≤5 s'.padStart(8)} ${'p50'.padStart(7)} ${'p95'.padStart(7)} ${'slowest'.padStart(8)} ${'cores'.padStart(5)}  after flood / flood`,
  );
  for (const r of cpu.shapes)
    console.log(
      `  ${r.name.padEnd(92)} ${r.share.toFixed(3).padStart(8)} ${`${r.p50Ms} ms`.padStart(7)} ${`${r.p95Ms} ms`.padStart(7)} ${`${r.slowestMs} ms`.padStart(8)} ${r.serveCores.toFixed(2).padStart(5)}  ${r.after === undefined ? '' : `healthz ${r.after.healthz} readyz ${r.after.readyz} delivery ${r.after.delivery} (slowest ${r.after.slowestMs} ms); ${r.flood?.opened} connections, answers ${JSON.stringify(r.flood?.answers)}, unanswered ${r.flood?.unanswered}`}`,
    );
  console.log(`  acknowledged ${cpu.acknowledged}, stored ${cpu.stored} (goal: equal)`);
  console.log(`  goal: every shape 2xx ≤5 s ≥ 0.950 and p95 ≤ 500 ms; serve answers at once after`);
}

try {
  const part = flags.only;
  const fair = part === 'memory' || part === 'cpu' ? [] : await fairness();
  if (fair.length > 0) {
    console.log(
      `fairness: serve's defaults; the sender's deliveries every 250 ms for ${settings.shapeSeconds} s a shape, a new connection each`,
    );
    console.log(`  ${'shape'.padEnd(90)} ${'2xx share'.padStart(9)} ${'slowest'.padStart(9)} ${'log B/s'.padStart(8)}  flood`);
    for (const r of fair)
      console.log(
        `  ${r.name.padEnd(90)} ${r.share.toFixed(3).padStart(9)} ${`${r.slowestMs} ms`.padStart(9)} ${String(r.logBytesPerSecond ?? '').padStart(8)}  ${r.flood === undefined ? '' : `${r.flood.opened} connections, answers ${JSON.stringify(r.flood.answers)}`}`,
      );
    console.log(`  goal: share 1.000 and slowest < 5000 ms under every shape`);
  }
  const cpu = part === 'memory' || part === 'fairness' ? undefined : await cpuFloods();
  if (cpu !== undefined) printCpu(cpu);
  if (part === 'fairness' || part === 'cpu') {
    mkdirSync(RESULTS, { recursive: true });
    const results = {
      machine: machineInfo(ROOT, TMP),
      git: gitInfo(ROOT),
      dist: process.env.BENCH_DIST ?? 'dist',
      settings,
      fairness: fair,
      cpu,
    };
    writeFileSync(join(RESULTS, 'flood.json'), `${JSON.stringify(results, null, 2)}\n`);
  } else await memory(fair, cpu);
} finally {
  killLeftovers();
}

/** The memory part: what the flood of slow bodies makes serve hold, and the deliveries meanwhile. */
async function memory(fair: ShapeResult[], cpu: Awaited<ReturnType<typeof cpuFloods>> | undefined): Promise<void> {
  const { rssMb, deliveries, flood } = await measure();
  const byStatus: Record<string, number> = {};
  for (const d of deliveries) byStatus[String(d.status)] = (byStatus[String(d.status)] ?? 0) + 1;
  const slowestMs = Math.round(Math.max(...deliveries.map((d) => d.ms)));
  const results = {
    machine: machineInfo(ROOT, TMP),
    git: gitInfo(ROOT),
    dist: process.env.BENCH_DIST ?? 'dist',
    settings,
    rssMb,
    deliveries: { byStatus, slowestMs },
    flood,
    fairness: fair,
    cpu,
  };
  console.log(
    `flood: ${settings.connections} connections, ${settings.seconds} s, bodies of ${settings.bodyBytes} bytes in ${settings.chunkBytes}-byte pieces every ${settings.tickMs} ms, reconnecting after ${settings.reconnectMs} ms`,
  );
  console.log(`  RSS before  ${rssMb.before} MB   (baseline)`);
  console.log(`  RSS peak    ${rssMb.peak} MB   (goal < 250)`);
  console.log(`  RSS after   ${rssMb.after} MB`);
  console.log(`  deliveries  ${JSON.stringify(byStatus)}, slowest ${slowestMs} ms (goal < 5000)`);
  console.log(`  flood       ${flood.opened} connections, answers ${JSON.stringify(flood.answers)}`);
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'flood.json'), `${JSON.stringify(results, null, 2)}\n`);
}
