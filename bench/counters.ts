// What the figures of /metrics, the console's overview and `inspect` cost as the inbox grows: an
// inbox of N events loaded by a replay (the bulk loader on SQLite), then the time of `counts()`
// (the inbox by state and the handler failures) and of the campaigns with their figures, each the
// median of several reads. Run it against two builds (BENCH_DIST=<copy of an older dist/>) to
// compare: the figures of one machine and one run, read as ratios.
//
//   npm run bench:build && node build/bench/counters.js --events 200000 [--postgres postgres://…]
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeScenario } from './make-scenario.js';
import { distModule, distUrl, TMP } from './lib/paths.js';
import { median, round } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    reads: { type: 'string', default: '9' },
    postgres: { type: 'string' },
  },
});
const events = Number(values.events);
const reads = Number(values.reads);
const { openStore, replay, createQueries } = await distModule();
// The inbox counts are a port the public handle keeps internal.
const { storePorts } = (await import(distUrl('store/store.js'))) as typeof import('../dist/store/store.js');

/** Milliseconds of each of `reads` calls of `read`, after one to warm the caches. */
async function timed(read: () => Promise<unknown>): Promise<number | null> {
  await read();
  const times: number[] = [];
  for (let i = 0; i < reads; i++) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  return round(median(times), 2);
}

const dir = join(TMP, 'counters');
mkdirSync(dir, { recursive: true });
const scenario = join(dir, `scenario-${events}.ndjson`);
writeScenario({ events, duplicates: 0.1, seed: 20261120, out: scenario });
const database = values.postgres ?? join(dir, 'counters.db');
if (values.postgres === undefined) rmSync(database, { force: true });

const loadStarted = performance.now();
await replay(scenario, { database });
const loadMs = round(performance.now() - loadStarted, 0);
const store = storePorts(await openStore(database));
try {
  const queries = createQueries(store);
  const countsMs = await timed(() => store.counts());
  const campaignsMs = await timed(() => queries.listCampaigns());
  console.log(
    JSON.stringify({
      engine: values.postgres === undefined ? 'sqlite' : 'postgres',
      events,
      inbox: await store.counts(),
      campaigns: (await queries.listCampaigns()).length,
      load_ms: loadMs,
      counts_ms: countsMs,
      campaigns_ms: campaignsMs,
    }),
  );
} finally {
  await store.close();
  if (values.postgres === undefined) rmSync(database, { force: true });
}
