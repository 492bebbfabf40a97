#!/usr/bin/env node
// How long `prequal-hooks copy` takes to move a receiver's SQLite database to PostgreSQL, and back:
// `npm run bench:copy` (then `node build/bench/copy.js --events 1000000`). The bench's scenario
// (bench/make-scenario.ts: campaigns, candidates, their interviews, duplicates) replayed by the CLI
// into a new SQLite file, then copied by the CLI into a new database of the bench's PostgreSQL
// (durable settings), then from there into a new SQLite file. Prints events/s each way, beside the
// replay of the same file on the same machine as the baseline. Results: bench/results/copy.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { machineInfo } from './lib/machine.js';
import { RESULTS, ROOT, TMP } from './lib/paths.js';
import { startBenchPostgres } from './lib/postgres.js';
import { ensureScenario } from './lib/replay.js';

const { values: flags } = parseArgs({ options: { events: { type: 'string', default: '1000000' } } });
const events = Number(flags.events);
const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
const CLI = join(DIST, 'cli', 'main.js');
const log = (message: string) => process.stderr.write(`${message}\n`);

/** Runs the CLI, timed; fails loudly. */
function timed(args: string[]): number {
  const started = performance.now();
  const run = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`prequal-hooks ${args[0]} failed (${run.status}):\n${run.stderr}`);
  return performance.now() - started;
}

const perSecond = (n: number, ms: number) => Math.round(n / (ms / 1000));

mkdirSync(TMP, { recursive: true });
const scenario = await ensureScenario({ events, duplicates: 0, seed: 7, tmpDir: TMP, log });
const source = join(TMP, `copy-source-${process.pid}.db`);
const back = join(TMP, `copy-back-${process.pid}.db`);
const postgres = await startBenchPostgres(DIST);
try {
  log(`replaying ${events.toLocaleString('en')} events into ${source} …`);
  const replayMs = timed(['replay', '--db', source, scenario.file, '--progress', '0']);
  const db = new Database(source, { readonly: true });
  const stored = (db.prepare('SELECT COUNT(*) AS n FROM inbox').get() as { n: number }).n;
  db.close();
  const target = await postgres.fresh();
  log(`copying ${stored.toLocaleString('en')} stored events to PostgreSQL …`);
  const toPostgresMs = timed(['copy', '--from', source, '--to', target, '--json']);
  log('copying them back to a new SQLite file …');
  const toSqliteMs = timed(['copy', '--from', target, '--to', back, '--json']);
  const result = {
    events: stored,
    replayIntoSqlite: { ms: Math.round(replayMs), eventsPerSecond: perSecond(stored, replayMs) },
    sqliteToPostgres: { ms: Math.round(toPostgresMs), eventsPerSecond: perSecond(stored, toPostgresMs) },
    postgresToSqlite: { ms: Math.round(toSqliteMs), eventsPerSecond: perSecond(stored, toSqliteMs) },
    postgres: postgres.version,
    machine: machineInfo(ROOT, TMP),
  };
  writeFileSync(join(RESULTS, 'copy.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `copy of ${stored.toLocaleString('en')} events: SQLite to PostgreSQL ${(toPostgresMs / 1000).toFixed(1)} s ` +
      `(${result.sqliteToPostgres.eventsPerSecond} events/s), PostgreSQL to SQLite ${(toSqliteMs / 1000).toFixed(1)} s ` +
      `(${result.postgresToSqlite.eventsPerSecond} events/s); baseline: replay into SQLite ${(replayMs / 1000).toFixed(1)} s ` +
      `(${result.replayIntoSqlite.eventsPerSecond} events/s)`,
  );
} finally {
  await postgres.stop();
  for (const file of [source, back]) for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
