// What recording the changes (docs/projection.md section 10) costs the projection: the same
// events, stored pending, projected in batches as the dispatcher does, with the changes recorded
// (as shipped) and without (the baseline, `projectBatch`'s `changes: false`), in alternated rounds
// of one run on fresh SQLite files; then the bytes the changes add a projected event. Figures are
// this machine's and this run's: read the ratio.
//
//   npm run bench:changes -- [--events 20000] [--rounds 3] [--batch 100]
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeScenario } from './make-scenario.js';
import { distUrl, TMP } from './lib/paths.js';
import { median, round } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '100' },
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

/** One round: the events stored pending, then projected in batches; ms of the projection, and the file's bytes. */
async function round1(recordChanges: boolean): Promise<{ ms: number; bytes: number; changes: number }> {
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
    const started = performance.now();
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
    const { last } = await store.changesAfter(0, 1);
    await store.flush();
    await store.scrub();
    return { ms, bytes: statSync(database).size, changes: last };
  } finally {
    await store.close();
  }
}

const on: number[] = [];
const off: number[] = [];
let sizes = { on: 0, off: 0, changes: 0 };
for (let r = 0; r < rounds; r++) {
  const a = await round1(true);
  const b = await round1(false);
  on.push(a.ms);
  off.push(b.ms);
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
    bytes_an_event_added: round((sizes.on - sizes.off) / events, 0),
    bytes_a_change: sizes.changes === 0 ? null : round((sizes.on - sizes.off) / sizes.changes, 0),
  }),
);
