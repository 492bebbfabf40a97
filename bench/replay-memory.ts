#!/usr/bin/env node
// What holds the memory of a replay: `npm run bench:replay-memory` (then `node
// build/bench/replay-memory.js --events 1000000 --rounds 2`). The full bench's scenario replayed by
// the CLI into a new SQLite file (the bulk load), in rounds that alternate (ABBA) the CLI as shipped
// and the CLI with V8's default nursery (its smallNursery() made a no-op). Each process is watched
// from outside (/proc/<pid>/status every 50 ms: resident memory, anonymous and file-backed, and its
// peak) and from inside (replay-memory-sampler.ts: process.memoryUsage() every 100 ms; and
// --trace-gc, for V8's heap during the load's last steps, which never yield). At the peak, the
// resident memory is split into what is file-backed (Node's binary and libraries), V8's heap
// (committed, and what the last full GC left live), array buffers, and the rest, native: SQLite's
// page caches and sorter, better-sqlite3's statements, malloc's own. Results:
// bench/results/replay-memory.json.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { cpuMicros } from './lib/processes.js';
import { ensureScenario } from './lib/replay.js';
import { benchScript, RESULTS, ROOT, TMP } from './lib/paths.js';
import { median, round } from './lib/stats.js';

const { values: flags } = parseArgs({
  options: { events: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '2' } },
});
const CLI = join(process.env.BENCH_DIST ?? join(ROOT, 'dist'), 'cli', 'main.js');
const MB = 1048576;
type Mode = 'shipped' | 'default-nursery';

interface Outside {
  ms: number;
  rssKb: number;
  anonKb: number;
  fileKb: number;
}
interface Inside {
  ms: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}
interface Gc {
  ms: number;
  full: boolean;
  usedBefore: number;
  committedBefore: number;
  usedAfter: number;
}

/** What a round measured, in MB: the peak and its parts. */
interface Round {
  mode: Mode;
  eventsPerSec: number;
  cpuSec: number;
  peakRssMb: number;
  peakAtSec: number;
  wallSec: number;
  inLastSteps: boolean;
  fileBackedMb: number;
  anonymousMb: number;
  v8CommittedMb: number;
  v8LiveMb: number;
  arrayBuffersMb: number;
  nativeMb: number;
}

const statusKb = (status: string, field: string): number => Number(status.match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? 0);

/** Runs one replay, watched from outside and inside; its lines and samples. */
async function watchReplay(file: string, mode: Mode) {
  const db = join(TMP, `replay-memory-${process.pid}.db`);
  const removeDb = () => ['', '-wal', '-shm', '-journal'].forEach((suffix) => rmSync(`${db}${suffix}`, { force: true }));
  removeDb();
  const sampler = pathToFileURL(benchScript('replay-memory-sampler.js')).href;
  const args = ['--trace-gc', '--import', sampler, CLI, 'replay', file, '--db', db, '--json', '--progress', '0'];
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, BENCH_DEFAULT_NURSERY: mode === 'default-nursery' ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const outside: Outside[] = [];
  let peakKb = 0;
  let cpu = 0;
  const poll = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const ms = performance.now() - started;
      outside.push({ ms, rssKb: statusKb(status, 'VmRSS'), anonKb: statusKb(status, 'RssAnon'), fileKb: statusKb(status, 'RssFile') });
      peakKb = Math.max(peakKb, statusKb(status, 'VmHWM'));
      cpu = cpuMicros(child.pid!) ?? cpu;
    } catch {
      // exited between two polls
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(poll);
  const wallMs = performance.now() - started;
  removeDb();
  if (code !== 0) throw new Error(`replay exited with ${code}:\n${stderr.slice(-3000)}`);
  const gcLine = /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: (Scavenge|Mark-Compact|Mark-Sweep)\S* ([\d.]+) \(([\d.]+)\) -> ([\d.]+)/;
  const gcs: Gc[] = [];
  const summary: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = gcLine.exec(line);
    if (m)
      gcs.push({
        ms: Number(m[1]),
        full: m[2] !== 'Scavenge',
        usedBefore: Number(m[3]),
        committedBefore: Number(m[4]),
        usedAfter: Number(m[5]),
      });
    else if (!line.startsWith('[')) summary.push(line);
  }
  const inside = stderr
    .split('\n')
    .filter((line) => line.startsWith('memory '))
    .map((line) => JSON.parse(line.slice('memory '.length)) as Inside);
  const events = (JSON.parse(summary.join('\n')) as { received: number }).received;
  return { outside, inside, gcs, peakKb, cpuSec: cpu / 1e6, wallMs, events };
}

/** The peak of a run, split into its parts. */
function breakDown(mode: Mode, run: Awaited<ReturnType<typeof watchReplay>>): Round {
  const peak = run.outside.reduce((a, b) => (b.rssKb > a.rssKb ? b : a));
  // V8's heap at the peak: as committed when the next collection began (the peak is often the
  // moment before a full one gives pages back), and live as the last full one left it.
  const next = run.gcs.find((gc) => gc.ms >= peak.ms) ?? run.gcs[run.gcs.length - 1]!;
  const lastFull = run.gcs.filter((gc) => gc.full && gc.ms <= peak.ms).pop();
  const before = run.inside.filter((s) => s.ms <= peak.ms);
  const sample = before[before.length - 1] ?? run.inside[0]!;
  const anonymousMb = peak.anonKb / 1024;
  const v8CommittedMb = next.committedBefore;
  const arrayBuffersMb = sample.arrayBuffers / MB;
  return {
    mode,
    eventsPerSec: Math.round(run.events / (run.wallMs / 1000)),
    cpuSec: round(run.cpuSec)!,
    peakRssMb: round(run.peakKb / 1024)!,
    peakAtSec: round(peak.ms / 1000)!,
    wallSec: round(run.wallMs / 1000)!,
    // No sample from inside for 300 ms around the peak: the event loop was held by the last steps.
    inLastSteps: !run.inside.some((s) => Math.abs(s.ms - peak.ms) < 300),
    fileBackedMb: round(peak.fileKb / 1024)!,
    anonymousMb: round(anonymousMb)!,
    v8CommittedMb: round(v8CommittedMb)!,
    v8LiveMb: round(lastFull?.usedAfter ?? sample.heapUsed / MB)!,
    arrayBuffersMb: round(arrayBuffersMb)!,
    nativeMb: round(anonymousMb - v8CommittedMb - arrayBuffersMb)!,
  };
}

function describe(r: Round): string {
  return (
    `${r.mode.padEnd(15)} peak RSS ${r.peakRssMb} MB at ${r.peakAtSec} of ${r.wallSec} s (${r.inLastSteps ? 'last steps: sort, fold, indexes' : 'reading and appending'}); ` +
    `${r.eventsPerSec.toLocaleString('en')} events/s, CPU ${r.cpuSec} s\n` +
    `${''.padEnd(15)} file-backed ${r.fileBackedMb} + anonymous ${r.anonymousMb}: V8 heap ${r.v8CommittedMb} committed (${r.v8LiveMb} live after the last full GC), ` +
    `array buffers ${r.arrayBuffersMb}, native ${r.nativeMb} (SQLite's caches and sorter, statements, malloc)`
  );
}

const log = (message: string) => console.error(message);
const scenario = await ensureScenario({ events: Number(flags.events), duplicates: 0.2, seed: 20261120, tmpDir: TMP, log });
// A file's default (an in-memory database has none): what the CLI's connections take.
const probe = join(TMP, `replay-memory-${process.pid}-probe.db`);
const sqlite = new Database(probe);
const mmapSize = sqlite.pragma('mmap_size', { simple: true }) as number;
sqlite.close();
rmSync(probe, { force: true });
console.log(
  `replay of ${scenario.meta.events.toLocaleString('en')} events (${Math.round(scenario.meta.bytes / MB)} MB) into a new SQLite file, ${CLI.replace(`${ROOT}/`, '')}\n` +
    `SQLite during the load: cache_size 2,000 KiB on the database and on the scratch, mmap_size ${mmapSize}, rollback journal (no WAL index)`,
);
const rounds: Round[] = [];
const modes: Mode[] = ['shipped', 'default-nursery'];
for (let i = 0; i < Number(flags.rounds); i++) {
  for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) {
    const r = breakDown(mode, await watchReplay(scenario.file, mode));
    rounds.push(r);
    console.log(describe(r));
  }
}
const medianOf = (mode: Mode, pick: (r: Round) => number) => median(rounds.filter((r) => r.mode === mode).map(pick))!;
const [shipped, wide] = modes;
console.log(
  `medians: peak RSS ${medianOf(shipped!, (r) => r.peakRssMb)} against ${medianOf(wide!, (r) => r.peakRssMb)} MB with the default nursery; ` +
    `events/s ${round(medianOf(shipped!, (r) => r.eventsPerSec) / medianOf(wide!, (r) => r.eventsPerSec), 2)}×, ` +
    `CPU ${round(medianOf(shipped!, (r) => r.cpuSec) / medianOf(wide!, (r) => r.cpuSec), 2)}×`,
);
writeFileSync(join(RESULTS, 'replay-memory.json'), `${JSON.stringify({ date: new Date().toISOString(), mmapSize, rounds }, null, 2)}\n`);
