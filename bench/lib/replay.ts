// The replay benchmark: a large scenario file (cached by its parameters) replayed into a new
// database by a child process, timed and its peak RSS taken from outside.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { benchErasure } from './erasure.js';
import { BENCH, ROOT, benchScript } from './paths.js';
import { measureCommand } from './processes.js';
import type { RebuildResult, ReplayResult, Scenario, ScenarioMeta } from './types.js';

export interface ScenarioRequest {
  events: number;
  duplicates: number;
  seed: number;
  tmpDir: string;
  log: (message: string) => void;
}

/** How to replay a file: what the results call it, and the node arguments. */
export interface ReplayCommand {
  how: string;
  args: string[];
}

/** The scenario for these parameters, generated (in a child, streaming) unless already cached. */
export async function ensureScenario({ events, duplicates, seed, tmpDir, log }: ScenarioRequest): Promise<Scenario> {
  const generatorHash = createHash('sha256')
    .update(readFileSync(join(BENCH, 'lib/events.ts')))
    .update(readFileSync(join(BENCH, 'make-scenario.ts')))
    .update(JSON.stringify({ events, duplicates, seed }))
    .digest('hex')
    .slice(0, 12);
  const file = join(tmpDir, `scenario-${events}-${generatorHash}.ndjson`);
  const metaFile = `${file}.meta.json`;
  if (existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as ScenarioMeta;
    if (statSync(file).size === meta.bytes) return { file, meta, cached: true };
  }
  log(`generating the replay scenario (${events.toLocaleString('en')} events) in ${file} …`);
  const run = await measureCommand(process.execPath, [
    benchScript('make-scenario.js'),
    '--events',
    String(events),
    '--duplicates',
    String(duplicates),
    '--seed',
    String(seed),
    '--out',
    file,
  ]);
  if (run.code !== 0) throw new Error(`make-scenario failed:\n${run.stderr}`);
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as ScenarioMeta;
  return { file, meta, cached: false, generation: { wallMs: Math.round(run.wallMs), maxRssMb: Math.round(run.maxRssKb / 1024) } };
}

/** `prequal-hooks replay … --json` when the CLI has it; `bench/replay-child.ts` otherwise. */
export function replayCommand(file: string, db: string, cli: string): ReplayCommand {
  let hasCli = false;
  try {
    const help = execFileSync(process.execPath, [cli, '--help'], { encoding: 'utf8' });
    if (/^\s+replay\s/m.test(help)) {
      hasCli = execFileSync(process.execPath, [cli, 'replay', '--help'], { encoding: 'utf8' }).includes('--json');
    }
  } catch {
    hasCli = false;
  }
  return hasCli
    ? { how: 'prequal-hooks replay <file> --db <new> --json', args: [cli, 'replay', file, '--db', db, '--json'] }
    : { how: 'build/bench/replay-child.js (replay() from dist/index.js)', args: [benchScript('replay-child.js'), file, '--db', db] };
}

/** Whether the CLI has `command` with `flag` (older builds, measured for comparison, may not). */
function cliHas(cli: string, command: string, flag: string): boolean {
  try {
    return execFileSync(process.execPath, [cli, command, '--help'], { encoding: 'utf8' }).includes(flag);
  } catch {
    return false;
  }
}

/**
 * `prequal-hooks rebuild --db <db> --json` on the database a replay just wrote: every accepted
 * inbox event re-projected into emptied tables, timed and its peak RSS taken from outside.
 */
async function benchRebuild({ db, cli, env }: { db: string; cli: string; env: Record<string, string> }): Promise<RebuildResult> {
  const run = await measureCommand(process.execPath, [cli, 'rebuild', '--db', db, '--json'], { cwd: ROOT, env });
  if (run.code !== 0) throw new Error(`rebuild exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  const summary = JSON.parse(run.stdout) as { events: number };
  return {
    command: 'prequal-hooks rebuild --db <replayed> --json',
    events: summary.events,
    wallMs: Math.round(run.wallMs),
    eventsPerSec: Math.round(summary.events / (run.wallMs / 1000)),
    maxRssMb: Math.round((run.maxRssKb / 1024) * 10) / 10,
    summary,
  };
}

/**
 * Replays the scenario into a new database; `batched` takes the batched path (the baseline of
 * the bulk load), `rebuild` then times a rebuild of the database written.
 */
export interface ReplayRequest {
  scenario: Scenario;
  tmpDir: string;
  cli: string;
  env: Record<string, string>;
  /** The batched path (the bulk load's baseline); null when the CLI has no --batched. */
  batched?: boolean;
  /** Then time a rebuild of the database written. */
  rebuild?: boolean;
  /** Then time erasures on it (last: they change it). */
  erasure?: boolean;
}

export async function benchReplay({
  scenario,
  tmpDir,
  cli,
  env,
  batched = false,
  rebuild = false,
  erasure = false,
}: ReplayRequest): Promise<ReplayResult | null> {
  const db = join(tmpDir, `replay-${process.pid}-${Date.now()}.db`);
  const command = replayCommand(scenario.file, db, cli);
  if (batched) {
    if (!cliHas(cli, 'replay', '--batched')) return null;
    command.args.push('--batched');
    command.how += ' --batched';
  }
  const run = await measureCommand(process.execPath, command.args, { cwd: ROOT, env });
  if (run.code !== 0) throw new Error(`replay exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  let summary: unknown;
  try {
    summary = JSON.parse(run.stdout);
  } catch {
    summary = { stdout: run.stdout.trim() };
  }
  // Check what was written, not only what the command said.
  const check = new Database(db, { readonly: true });
  const stored = check.prepare('SELECT state, COUNT(*) AS n FROM inbox GROUP BY state').all() as { state: string; n: number }[];
  const candidates = check.prepare('SELECT COUNT(*) FROM candidates').pluck().get() as number;
  const campaigns = check.prepare('SELECT COUNT(*) FROM campaigns').pluck().get() as number;
  check.close();
  const dbBytes = statSync(db).size;
  // The CLI's progress lines (cumulative events/s every 100,000 events) show how the rate changes
  // as the database grows.
  const progress = [...run.stderr.matchAll(/received (\d+)\b.*?\((\d+) events\/s\)/g)].map((m) => ({
    received: Number(m[1]),
    eventsPerSec: Number(m[2]),
  }));
  const rebuilt = rebuild && cliHas(cli, 'rebuild', '--json') ? await benchRebuild({ db, cli, env }) : undefined;
  // Last: it changes the database.
  const erased = erasure && cliHas(cli, 'erase', '--inactive-for') ? await benchErasure({ db, cli, env }) : undefined;
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
  const events = scenario.meta.events;
  return {
    command: command.how,
    events,
    wallMs: Math.round(run.wallMs),
    eventsPerSec: Math.round(events / (run.wallMs / 1000)),
    maxRssMb: Math.round((run.maxRssKb / 1024) * 10) / 10,
    rssMethod: run.rssMethod,
    summary,
    stored: Object.fromEntries(stored.map((r) => [r.state, r.n])),
    candidates,
    campaigns,
    dbMb: Math.round(dbBytes / 1048576),
    ...(progress.length > 0 && { progress }),
    ...(rebuilt && { rebuild: rebuilt }),
    ...(erased && { erasure: erased }),
  };
}
