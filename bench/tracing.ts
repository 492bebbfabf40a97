#!/usr/bin/env node
// The cost of OpenTelemetry tracing on ingest: `npm run bench:tracing` (a few
// seconds; builds, then node build/bench/tracing.js; --requests, --rounds, --connections). Three `prequal-hooks serve` processes, loopback only, each
// loaded by autocannon with the same bounded number of distinct signed events, rounds alternated
// (ABC CBA) and the median kept:
//   absent  the package without @opentelemetry installed (a copy whose node_modules lacks it);
//   off     @opentelemetry installed, no OTEL_* variable: the cost must be nil (off ÷ absent ≈ 1);
//   on      OTEL_EXPORTER_OTLP_ENDPOINT set: every request's server and commit spans, projection
//           and exports (http/protobuf) to a collector in this process (goal: on ÷ off ≥ 0.9).
// Results: a table on stdout, JSON in bench/results/tracing.json. --profile: the traced server
// under node --cpu-prof, its top frames by self time (no results file then).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRequestPool, fire, summariseRun, type RequestPool } from './lib/load.js';
import { machineInfo } from './lib/machine.js';
import { RESULTS, ROOT, TMP as BENCH_TMP } from './lib/paths.js';
import { killLeftovers, startServer } from './lib/processes.js';
import { median, round } from './lib/stats.js';
import type { Cursor, RunningServer, RunSummary, TracingResults, TracingTargetName } from './lib/types.js';
import { formatSummary, summariseProfile } from './profile-summary.js';

const TMP = join(BENCH_TMP, 'tracing');
const SECRET = 'bench-secret-5b1f0c2e9d';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '50' },
    profile: { type: 'boolean', default: false },
  },
});
const REQUESTS = Number(flags.requests);
const ROUNDS = Number(flags.rounds);
const CONNECTIONS = Number(flags.connections);

/** A copy of the package whose node_modules has everything but @opentelemetry (linked, not copied). */
function installWithoutOpenTelemetry(): string {
  const install = join(TMP, 'no-otel');
  rmSync(install, { recursive: true, force: true });
  mkdirSync(join(install, 'node_modules'), { recursive: true });
  for (const part of ['dist', 'migrations', 'package.json']) cpSync(join(ROOT, part), join(install, part), { recursive: true });
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name !== '@opentelemetry' && name !== '.bin') symlinkSync(join(ROOT, 'node_modules', name), join(install, 'node_modules', name));
  }
  return join(install, 'dist/cli/main.js');
}

/** An OTLP/HTTP collector that takes every export and counts them. */
async function startCollector(): Promise<{ url: string; seen: TracingResults['collector']; close: () => Promise<unknown> }> {
  const seen = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (seen.bytes += chunk.length));
    req.on('end', () => {
      seen.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * CPU time (user + system, ms) a process has used, from /proc: on a shared machine a steadier
 * measure of what tracing costs than a rate the load generator may bound. Null off Linux.
 */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
  } catch {
    return null;
  }
}

/** `amount` requests, each the next event of the pool (never a repeat on a server); 2xx a second up to the last answer. */
async function fireAmount(url: string, pool: RequestPool, cursor: Cursor, amount: number): Promise<RunSummary> {
  const result = await fire({ url, pool, cursor, headerStyle: 'service', connections: CONNECTIONS, amount });
  return { ...summariseRun(result), requestsPerSec: result['2xx'] / (result.wallMs! / 1000) };
}

interface TracingTarget {
  name: TracingTargetName;
  /** The CLI to run: the package's, or the copy without @opentelemetry. */
  main: string;
  env: Record<string, string>;
}

interface TracedServer extends TracingTarget {
  server: RunningServer;
  cursor: Cursor;
  runs: (RunSummary & { cpuUsPerRequest: number | null })[];
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const collector = await startCollector();
  const cli = join(ROOT, 'dist/cli/main.js');
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_SERVICE_NAME: 'bench' };
  const noOtel = Object.fromEntries(
    Object.keys(process.env)
      .filter((k) => k.startsWith('OTEL_'))
      .map((k) => [k, '']),
  );
  const targets: TracingTarget[] = [
    { name: 'absent', main: installWithoutOpenTelemetry(), env: noOtel },
    { name: 'off', main: cli, env: noOtel },
    { name: 'on', main: cli, env: otel },
  ];
  const pool = createRequestPool({ secret: SECRET, size: (REQUESTS * ROUNDS + 500) * targets.length });
  const servers: TracedServer[] = [];
  for (const [k, target] of targets.entries()) {
    const server = await startServer({
      name: target.name,
      command: process.execPath,
      args: [target.main, 'serve', '--port', '0', '--host', '127.0.0.1', '--db', join(TMP, `${target.name}.db`), '--secret', SECRET],
      logFile: join(TMP, `${target.name}.log`),
      env: target.env,
      // --profile: the traced server under node --cpu-prof, its top frames printed at the end.
      ...(flags.profile && target.name === 'on' && { nodeOptions: ['--cpu-prof', '--cpu-prof-dir', join(TMP, 'profile')] }),
    });
    // Each server its own slice of the pool; a short warm-up first (JIT, page cache).
    const cursor = { next: k * (REQUESTS * ROUNDS + 500) };
    await fireAmount(server.url, pool, cursor, 500);
    servers.push({ ...target, server, cursor, runs: [] });
  }
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        const before = cpuMs(s.server.pid);
        const run = await fireAmount(s.server.url, pool, s.cursor, REQUESTS);
        const after = cpuMs(s.server.pid);
        s.runs.push({ ...run, cpuUsPerRequest: before === null || after === null ? null : ((after - before) * 1000) / run.ok });
      }
    }
  } finally {
    for (const s of servers) await s.server.stop();
    await collector.close();
  }
  // Medians by target (NaN for one that measured nothing, as arithmetic on a missing one gave).
  const byName = (value: (s: TracedServer) => number | null): Record<TracingTargetName, number> =>
    Object.fromEntries(servers.map((s) => [s.name, value(s) ?? Number.NaN])) as Record<TracingTargetName, number>;
  const rate = byName((s) => median(s.runs.map((r) => r.requestsPerSec)));
  const cpu = byName((s) => median(s.runs.map((r) => r.cpuUsPerRequest ?? Number.NaN)));
  const failures = servers.reduce((n, s) => n + s.runs.reduce((m, r) => m + r.non2xx + r.errors + r.timeouts, 0), 0);
  const results: TracingResults = {
    date: new Date().toISOString(),
    machine: machineInfo(ROOT, TMP),
    requestsPerRound: REQUESTS,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    targets: servers.map((s) => ({
      name: s.name,
      requestsPerSec: round(rate[s.name]),
      p50Ms: median(s.runs.map((r) => r.p50Ms)),
      p99Ms: median(s.runs.map((r) => r.p99Ms)),
      cpuUsPerRequest: round(cpu[s.name]),
    })),
    onOverOff: round(rate.on / rate.off, 3),
    offOverAbsent: round(rate.off / rate.absent, 3),
    // Requests a CPU-second, on ÷ off: the throughput ratio when the server, not the load, is the limit.
    cpuOnOverOff: round(cpu.off / cpu.on, 3),
    cpuOffOverAbsent: round(cpu.absent / cpu.off, 3),
    collector: collector.seen,
    failures,
  };
  console.log('target   req/s     p50 ms  p99 ms  server CPU us/request');
  for (const t of results.targets) {
    console.log(
      `${t.name.padEnd(8)} ${String(t.requestsPerSec).padStart(8)}  ${String(t.p50Ms).padStart(6)}  ${String(t.p99Ms).padStart(6)}  ${String(t.cpuUsPerRequest).padStart(8)}`,
    );
  }
  console.log(`tracing on ÷ off: ${results.onOverOff} in req/s, ${results.cpuOnOverOff} in requests a CPU-second (goal ≥ 0.9)`);
  console.log(`off ÷ absent: ${results.offOverAbsent} in req/s, ${results.cpuOffOverAbsent} in requests a CPU-second (nil cost: ≈ 1)`);
  console.log(`OTLP exports received: ${collector.seen.exports} (${collector.seen.bytes} bytes); failed requests: ${failures}`);
  if (collector.seen.exports === 0) console.log('WARNING: the collector received no export: the "on" server did not trace');
  if (flags.profile) {
    // A profile changes the figures it explains: kept out of the results file.
    const dir = join(TMP, 'profile');
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) console.log('WARNING: the traced server wrote no profile');
    else
      console.log(`\n# the traced server under --cpu-prof (${join(dir, file)})\n${formatSummary(summariseProfile(join(dir, file), 30))}`);
    return;
  }
  writeFileSync(join(RESULTS, 'tracing.json'), `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((error) => {
  killLeftovers();
  console.error(error);
  process.exitCode = 1;
});
