// What recording the changes (docs/projection.md section 10) costs the projection: the same
// events, stored pending, projected in batches as the dispatcher does, with the changes recorded
// (as shipped) and without (the baseline, `projectBatch`'s `changes: false`), in alternated rounds
// of one run on fresh SQLite files; then the bytes the changes add a projected event. Figures are
// this machine's and this run's: read the ratio.
//
// With --pages, one more pair of rounds holds a reader's snapshot so that no checkpoint starts the
// WAL over, and charges each frame the projection appended to the table or index owning its page
// (SQLite's dbstat): the pages an event costs, with and without the changes, by owner.
//
//   npm run bench:changes -- [--events 20000] [--rounds 3] [--batch 100] [--pages]
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { writeScenario } from './make-scenario.js';
import { distUrl, TMP } from './lib/paths.js';
import { median, round } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '100' },
    pages: { type: 'boolean', default: false },
  },
});
const events = Number(values.events);
const rounds = Number(values.rounds);
const batch = Number(values.batch);

const { openStore } = (await import(distUrl('store/open.js'))) as typeof import('../dist/store/open.js');
const { storePorts } = (await import(distUrl('store/store.js'))) as typeof import('../dist/store/store.js');
const { projectBatch } = (await import(distUrl('project/batch.js'))) as typeof import('../dist/project/batch.js');
const { settlementsOf } = (await import(distUrl('project/settlement.js'))) as typeof import('../dist/project/settlement.js');
const { eventIdentity, parseInstant } = (await import(distUrl('events/index.js'))) as typeof import('../dist/events/index.js');

const scenario = join(TMP, `changes-scenario-${events}.ndjson`);
writeScenario({ events, duplicates: 0, seed: 20261128, out: scenario });
const bodies = readFileSync(scenario, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line) as { event: string; timestamp: string; data: Record<string, unknown> });

/** The WAL's frames past `from`, counted by the owner of the page each holds; frames an event by owner. */
function walPagesByOwner(database: string, from: number): Record<string, number> {
  const wal = readFileSync(`${database}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const db = new Database(database, { readonly: true });
  const ownerOf = new Map(
    (db.prepare('SELECT pageno, name FROM dbstat').all() as Array<{ pageno: number; name: string }>).map((r) => [r.pageno, r.name]),
  );
  db.close();
  const pages: Record<string, number> = {};
  for (let at = Math.max(32, from); at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const owner: string = ownerOf.get(wal.readUInt32BE(at)) ?? '(free pages)';
    pages[owner] = (pages[owner] ?? 0) + 1;
  }
  return Object.fromEntries(
    Object.entries(pages)
      .map(([owner, n]): [string, number] => [owner, Math.round((n / events) * 1000) / 1000])
      .filter(([, n]) => n >= 0.01)
      .sort((a, b) => b[1] - a[1]),
  );
}

/**
 * One round: the events stored pending, then projected in batches; ms of the projection (and of
 * this process's CPU meanwhile, which other jobs on the machine disturb less), and the file's bytes. With `holdWal`, the WAL pages the projection wrote, by owner.
 */
async function round1(
  recordChanges: boolean,
  holdWal = false,
): Promise<{ ms: number; cpuMs: number; bytes: number; changes: number; pages?: Record<string, number> }> {
  const database = join(TMP, `changes-${recordChanges ? 'on' : 'off'}.db`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(database + suffix, { force: true });
  const store = storePorts(await openStore(database));
  try {
    for (let i = 0; i < bodies.length; i += 1000) {
      await store.append(
        bodies.slice(i, i + 1000).map((event) => ({
          account: 'default',
          raw: Buffer.from(JSON.stringify(event)),
          receivedAt: new Date().toISOString(),
          identity: eventIdentity(event),
          eventAt: parseInstant(event.timestamp),
          kind: event.event,
          verdict: 'accepted' as const,
          secretId: null,
          reasons: null,
        })),
      );
    }
    await store.flush();
    const reader = holdWal ? new Database(database, { readonly: true }) : undefined;
    reader?.exec('BEGIN');
    reader?.prepare('SELECT count(*) FROM change_heads').get();
    const walFrom = holdWal ? statSync(`${database}-wal`).size : 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    for (;;) {
      const done = await store.write(
        async (tx) => {
          const rows = await tx.claimPending(batch);
          const processed = await projectBatch(tx, rows, { changes: recordChanges });
          await tx.settle(settlementsOf(rows, processed), new Date().toISOString());
          return rows.length;
        },
        { durable: false },
      );
      if (done === 0) break;
    }
    const ms = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    const cpuMs = (user + system) / 1000;
    const pages = holdWal ? walPagesByOwner(database, walFrom) : undefined;
    reader?.exec('COMMIT');
    reader?.close();
    const { last } = await store.changesAfter(0, 1);
    await store.flush();
    await store.scrub();
    return { ms, cpuMs, bytes: statSync(database).size, changes: last, ...(pages === undefined ? {} : { pages }) };
  } finally {
    await store.close();
  }
}

const on: number[] = [];
const off: number[] = [];
const cpuOn: number[] = [];
const cpuOff: number[] = [];
let sizes = { on: 0, off: 0, changes: 0 };
for (let r = 0; r < rounds; r++) {
  const a = await round1(true);
  const b = await round1(false);
  on.push(a.ms);
  off.push(b.ms);
  cpuOn.push(a.cpuMs);
  cpuOff.push(b.cpuMs);
  sizes = { on: a.bytes, off: b.bytes, changes: a.changes };
}
const [medianOn, medianOff] = [median(on)!, median(off)!];
console.log(
  JSON.stringify({
    events,
    batch,
    rounds,
    changes_recorded: sizes.changes,
    projection_us_an_event: { with_changes: round((medianOn * 1000) / events, 1), baseline: round((medianOff * 1000) / events, 1) },
    ratio_with_over_baseline: round(medianOn / medianOff, 2),
    cpu_us_an_event: { with_changes: round((median(cpuOn)! * 1000) / events, 1), baseline: round((median(cpuOff)! * 1000) / events, 1) },
    cpu_ratio_with_over_baseline: round(median(cpuOn)! / median(cpuOff)!, 2),
    bytes_an_event_added: round((sizes.on - sizes.off) / events, 0),
    bytes_a_change: sizes.changes === 0 ? null : round((sizes.on - sizes.off) / sizes.changes, 0),
  }),
);
if (values.pages) {
  const [withChanges, without] = [await round1(true, true), await round1(false, true)];
  console.log(JSON.stringify({ wal_pages_an_event_by_owner: { with_changes: withChanges.pages, baseline: without.pages } }));
}
