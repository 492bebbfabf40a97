// The big database of the scale benchmark (bench/scale.ts): N distinct events of the replay
// scenario (bench/make-scenario.ts, written by a child, streamed), plus a share of events set aside
// (unknown kinds, invalid envelopes), loaded by `prequal-hooks replay` (the bulk loader, one
// transaction into an empty database), then each row's receipt moved to its event's instant (a
// replay stamps them all with the load's) and handler failures added beside some projected rows.
// Cached under bench/tmp/scale by N and a hash of the generator, so that a second run reuses it;
// the NDJSON is removed once loaded (the database is what is kept). A cache made by an older
// schema is upgraded in place by `prequal-hooks migrate`, as an operator's database would be, and
// the upgrade's time is kept with it (making ten million events again takes half an hour).
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createEventSpace, mix } from './events.js';
import { removeDatabase } from './database.js';
import { ensureScenario } from './replay.js';
import { BENCH, ROOT } from './paths.js';
import { measureCommand } from './processes.js';

const SEED = 20261120;
/** Bump when what is loaded changes (rows added, rewritten): the cache is keyed by it. */
const DATABASE_VERSION = 1;
/** Events set aside (dead or unknown), and handler failures, per million distinct events. */
const SET_ASIDE_PER_MILLION = 1000;
const HANDLER_FAILURES_PER_MILLION = 500;

export interface BigDatabase {
  file: string;
  events: number;
  migration: number;
  cached: boolean;
  /** Each upgrade of the cached file by `prequal-hooks migrate`: from, to, how long it took. */
  upgrades?: Array<{ from: number; to: number; ms: number }>;
  bytes: number;
  /** How long each step took when it was made (kept with the cache). */
  generation: { scenarioMs: number; replayMs: number; extrasMs: number; totalMs: number; replayMaxRssMb: number };
  rows: { inbox: Record<string, number>; handlerFailures: number; campaigns: number; candidates: number };
}

/** The newest migration of the SQLite schema this code makes (its file's number). */
function newestMigration(): number {
  return Math.max(...readdirSync(join(ROOT, 'migrations', 'sqlite')).map((name) => Number.parseInt(name, 10) || 0));
}

function generatorHash(): string {
  return createHash('sha256')
    .update(readFileSync(join(BENCH, 'lib/events.ts')))
    .update(readFileSync(join(BENCH, 'make-scenario.ts')))
    .update(String(DATABASE_VERSION))
    .digest('hex')
    .slice(0, 8);
}

/** Event lines the service never sends well: unknown kinds (kept as unknown) and envelopes missing data (dead). */
function writeSetAside(out: string, count: number): void {
  const fd = openSync(out, 'w');
  try {
    const lines: string[] = [];
    for (let i = 0; i < count; i++) {
      const timestamp = new Date(Date.UTC(2026, 0, 5) + mix(SEED, i) * 10).toISOString();
      const id = `${mix(i, 7).toString(16).padStart(8, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const event =
        i % 2 === 0
          ? { event: 'candidate.interview.rescheduled', timestamp, data: { candidate_id: id, campaign_id: 'cmp_unknown' } }
          : { event: 'candidate.added', timestamp, data: { candidate_id: id, first_name: 'Sans', phone: 'not a phone' } };
      lines.push(JSON.stringify(event));
    }
    writeSync(fd, `${lines.join('\n')}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replay stamps every row with the instant of the load; a receiver's inbox was received over the
 * months its events span. Each row's receipt (and processing) becomes its event's instant plus two
 * seconds, so that "the last hour" holds what it would (the overview's events per minute). The
 * index by receipt is built again after, as the bulk loader builds its own, and with no journal:
 * the file is renamed into the cache only once it is whole.
 */
function spreadReceipts(db: string): void {
  const connection = new Database(db);
  try {
    connection.pragma('journal_mode = OFF');
    connection.pragma('synchronous = OFF');
    const index = connection.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'inbox_by_received'").pluck().get() as
      string | undefined;
    if (index !== undefined) connection.exec('DROP INDEX inbox_by_received');
    // Unix ms since migration 26 (src/store/instants.ts), ISO text before.
    const inMs =
      connection.prepare("SELECT 1 FROM pragma_table_info('inbox') WHERE name = 'received_at' AND type = 'INTEGER'").get() !== undefined;
    const instant = inMs ? 'event_at + 2000' : `strftime('%Y-%m-%dT%H:%M:%fZ', (event_at + 2000) / 1000.0, 'unixepoch')`;
    connection.exec(`UPDATE inbox SET received_at = ${instant}, processed_at = ${instant} WHERE event_at IS NOT NULL`);
    if (index !== undefined) connection.exec(index);
    connection.pragma('journal_mode = WAL');
  } finally {
    connection.close();
  }
}

/** Handler failures beside every k-th projected row, as a handler that kept failing leaves them. */
function addHandlerFailures(db: string, count: number): void {
  const connection = new Database(db);
  try {
    const projected = connection.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'projected'").pluck().get() as number;
    const every = Math.max(1, Math.floor(projected / Math.max(1, count)));
    connection.exec('BEGIN');
    connection
      .prepare(
        `INSERT INTO handler_failures (inbox_id, handler, error, attempts, failed_at, account)
         SELECT inbox_id, 'notify-crm', 'Error: connect ECONNREFUSED 10.0.0.12:443', 5, processed_at, account
           FROM inbox WHERE state = 'projected' AND inbox_id % ? = 0 LIMIT ?`,
      )
      .run(every, count);
    connection.exec('COMMIT');
  } finally {
    connection.close();
  }
}

function describe(db: string): BigDatabase['rows'] {
  const connection = new Database(db, { readonly: true });
  try {
    const inbox = connection.prepare("SELECT key, n FROM counters WHERE name = 'inbox' AND account = 'default'").all() as Array<{
      key: string;
      n: number;
    }>;
    const counter = (name: string) =>
      (connection.prepare('SELECT COALESCE(SUM(n), 0) FROM counters WHERE name = ?').pluck().get(name) as number) ?? 0;
    return {
      inbox: Object.fromEntries(inbox.map((r) => [r.key, r.n])),
      handlerFailures: counter('handler_failures'),
      campaigns: connection.prepare('SELECT COUNT(*) FROM campaigns').pluck().get() as number,
      candidates: counter('candidates'),
    };
  } finally {
    connection.close();
  }
}

/** The stream the big database is loaded from: the scenario's file, then the events set aside. */
export interface EventStream {
  files: string[];
  remove(): void;
}

/** The files of the stream of `events` distinct events (the scenario cached while it is kept), made if absent. */
export async function eventStream({
  events,
  dir,
  log,
}: {
  events: number;
  dir: string;
  log: (message: string) => void;
}): Promise<EventStream> {
  const scenario = await ensureScenario({ events, duplicates: 0, seed: SEED, tmpDir: dir, log });
  const setAside = join(dir, `set-aside-${events}.ndjson`);
  writeSetAside(setAside, Math.round((events * SET_ASIDE_PER_MILLION) / 1e6));
  return {
    files: [scenario.file, setAside],
    remove: () => {
      for (const f of [scenario.file, `${scenario.file}.meta.json`, setAside]) rmSync(f, { force: true });
    },
  };
}

/**
 * The cached database of `events` distinct events, made if absent. `cli` is the frozen build's
 * CLI (its replay loads the events), `env` its environment.
 */
export async function ensureBigDatabase({
  events,
  dir,
  cli,
  env,
  log,
}: {
  events: number;
  dir: string;
  cli: string;
  env: Record<string, string>;
  log: (message: string) => void;
}): Promise<BigDatabase> {
  mkdirSync(dir, { recursive: true });
  const migration = newestMigration();
  const file = join(dir, `big-${events}-g${generatorHash()}.db`);
  const metaFile = `${file}.meta.json`;
  if (existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as BigDatabase;
    if (meta.migration < migration) {
      log(`upgrading the cached database from migration ${meta.migration} to ${migration} with prequal-hooks migrate …`);
      const upgradeStarted = performance.now();
      const run = await measureCommand(process.execPath, [cli, 'migrate', '--db', file, '--json'], { cwd: ROOT, env });
      if (run.code !== 0) throw new Error(`migrate exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
      meta.upgrades = [
        ...(meta.upgrades ?? []),
        { from: meta.migration, to: migration, ms: Math.round(performance.now() - upgradeStarted) },
      ];
      meta.migration = migration;
      meta.rows = describe(file);
      writeFileAtomically(metaFile, `${JSON.stringify({ ...meta, file }, null, 2)}\n`);
    }
    return { ...meta, file, cached: true, bytes: statSync(file).size };
  }
  const started = performance.now();
  const stream = await eventStream({ events, dir, log });
  const scenarioMs = performance.now() - started;

  const partial = `${file}.partial`;
  removeDatabase(partial);
  log(`loading ${events.toLocaleString('en')} events with prequal-hooks replay (the bulk loader) …`);
  const replayStarted = performance.now();
  const run = await measureCommand(process.execPath, [cli, 'replay', ...stream.files, '--db', partial, '--json'], {
    cwd: ROOT,
    env,
  });
  if (run.code !== 0) throw new Error(`replay exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  const replayMs = performance.now() - replayStarted;
  const extrasStarted = performance.now();
  spreadReceipts(partial);
  addHandlerFailures(partial, Math.round((events * HANDLER_FAILURES_PER_MILLION) / 1e6));
  const extrasMs = performance.now() - extrasStarted;
  stream.remove();
  renameSync(partial, file);
  for (const suffix of ['-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });

  const made: BigDatabase = {
    file,
    events,
    migration,
    cached: false,
    bytes: statSync(file).size,
    generation: {
      scenarioMs: Math.round(scenarioMs),
      replayMs: Math.round(replayMs),
      extrasMs: Math.round(extrasMs),
      totalMs: Math.round(performance.now() - started),
      replayMaxRssMb: Math.round(run.maxRssKb / 1024),
    },
    rows: describe(file),
  };
  writeFileAtomically(metaFile, `${JSON.stringify(made, null, 2)}\n`);
  return made;
}

function writeFileAtomically(file: string, text: string): void {
  const fd = openSync(`${file}.partial`, 'w');
  writeSync(fd, text);
  closeSync(fd);
  renameSync(`${file}.partial`, file);
}

/**
 * The events of the first campaign of the scenario and of its candidates: what the console's
 * campaign and candidate pages show, on the big database and on the baseline alike.
 */
export function writeFirstCampaign(out: string): { campaignId: string; candidateId: string; events: number } {
  const space = createEventSpace(SEED);
  space.extend(1000);
  const lines: string[] = [];
  let candidateId: string | undefined;
  // Unit 0 is the campaign, units 1 … 200 its candidates (bench/lib/events.ts).
  for (let unit = 0; unit <= 200; unit++) {
    for (const event of space.unitEvents(unit)) {
      lines.push(JSON.stringify(event));
      const data = event.data as { candidate_id?: string };
      if (candidateId === undefined && data.candidate_id !== undefined && event.event === 'candidate.interview.completed')
        candidateId = data.candidate_id;
    }
  }
  const first = space.unitEvents(0)[0]!.data as { campaign_id: string };
  if (candidateId === undefined) throw new Error('the first campaign has no completed interview');
  const fd = openSync(out, 'w');
  writeSync(fd, `${lines.join('\n')}\n`);
  closeSync(fd);
  return { campaignId: first.campaign_id, candidateId, events: lines.length };
}
