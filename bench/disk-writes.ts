#!/usr/bin/env node
// Where the disk writes of ingest go (issue 25): the receiver in this process takes N distinct
// signed events, 50 at a time (group commits as under load), projects them, and the bytes this
// process had written to storage (/proc/self/io write_bytes: WAL frames, checkpoints) are divided
// by N. Run on the schema as it is, then without some of the indexes intake writes, one variant
// at a time, each on a fresh database: what each index costs in bytes an event.
//
//   npm run bench:disk-writes -- [--events 20000]   (builds, then node build/bench/disk-writes.js)
//
// The variants without an index are measurements, not configurations: without inbox_identity,
// duplicates would not be found.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createReceiver } from 'prequal-hooks';
import { createRequestPool, type RequestPool } from './lib/load.js';
import { TMP } from './lib/paths.js';

/** Indexes dropped from the shipped schema before the run. */
interface Variant {
  name: string;
  drop: string[];
}

const SECRET = 'bench-secret-5b1f0c2e9d';
const { values: flags } = parseArgs({ options: { events: { type: 'string', default: '20000' } } });
const EVENTS = Number(flags.events);

const VARIANTS: Variant[] = [
  { name: 'as shipped', drop: [] },
  { name: 'without inbox_by_subject', drop: ['inbox_by_subject'] },
  { name: 'without inbox_identity', drop: ['inbox_identity'] },
  { name: 'without inbox_handlers_by_key', drop: ['inbox_handlers_by_key'] },
  { name: 'without all three (random keys)', drop: ['inbox_by_subject', 'inbox_identity', 'inbox_handlers_by_key'] },
];

const written = (): number => Number(/^write_bytes:\s+(\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

async function measure(variant: Variant, pool: RequestPool, offset: number): Promise<{ variant: string; bytesPerEvent: number; eventsPerSec: number }> {
  const path = join(TMP, `disk-writes-${process.pid}.db`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  await createReceiver({ database: path, secret: SECRET, heartbeat: false }).close(); // migrated
  const db = new Database(path);
  for (const index of variant.drop) db.exec(`DROP INDEX ${index}`);
  db.close();
  const receiver = createReceiver({ database: path, secret: SECRET, heartbeat: false });
  await receiver.ready();
  const before = written();
  const started = performance.now();
  for (let i = 0; i < EVENTS; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, EVENTS - i) }, (_, k) => {
        const r = pool.at(offset + i + k);
        return receiver.receive({ rawBody: r.body, headers: { 'x-service-signature': r.signature, 'x-service-event': r.kind, 'content-type': 'application/json' } });
      }),
    );
  }
  await receiver.drain();
  const ms = performance.now() - started;
  const bytes = written() - before;
  await receiver.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  return { variant: variant.name, bytesPerEvent: Math.round(bytes / EVENTS), eventsPerSec: Math.round(EVENTS / (ms / 1000)) };
}

const pool = createRequestPool({ secret: SECRET, size: EVENTS * VARIANTS.length });
console.log(`${EVENTS.toLocaleString('en')} distinct signed events a variant, 50 at a time, received and projected in this process`);
console.log(`${'variant'.padEnd(36)} ${'disk bytes/event'.padStart(16)} ${'events/s'.padStart(9)}`);
for (const [k, variant] of VARIANTS.entries()) {
  const r = await measure(variant, pool, k * EVENTS);
  console.log(`${r.variant.padEnd(36)} ${r.bytesPerEvent.toLocaleString('en').padStart(16)} ${r.eventsPerSec.toLocaleString('en').padStart(9)}`);
}
