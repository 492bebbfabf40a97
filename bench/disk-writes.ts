#!/usr/bin/env node
// Where the writes of ingest go. The receiver in this process takes N distinct signed
// events, 50 at a time (group commits as under load), and projects them, on a fresh database:
//   disk bytes/event  what this process wrote to storage (/proc/self/io write_bytes: WAL frames,
//                     and checkpoints copying them into the file), over N;
//   WAL bytes/event   every frame the load appended to the WAL: a reader holds its snapshot from
//                     the start, so that no checkpoint starts the WAL over, and its size at the
//                     end is all of them. Each frame is charged to the table or index that owns
//                     its page (SQLite's dbstat).
// Both in two orders of arrival: the pool's (a candidate's whole story at once, as the HTTP bench
// sends it) and the events' timestamps (as a live sender sends them).
//
//   npm run bench:disk-writes -- [--events 20000]
//   BENCH_DIST=<another build's dist folder> node build/bench/disk-writes.js   (that version, for a before/after)
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createRequestPool, type RequestPool } from './lib/load.js';
import { distModule, TMP } from './lib/paths.js';

type Arrival = 'pool' | 'time';

interface Measured {
  arrival: Arrival;
  diskBytesPerEvent: number;
  eventsPerSec: number;
  walBytesPerEvent: number;
  /** WAL bytes per event by the table or index whose page the frame holds, largest first. */
  walByOwner: Array<[string, number]>;
}

const SECRET = 'bench-secret-5b1f0c2e9d';
const BATCH = 50;
const { values: flags } = parseArgs({ options: { events: { type: 'string', default: '20000' } } });
const EVENTS = Number(flags.events);
const { createReceiver } = await distModule();

const written = (): number => Number(/^write_bytes:\s+(\d+)/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

/** Request i of the load, in the order of arrival asked for. */
function arrivals(pool: RequestPool, arrival: Arrival): (i: number) => number {
  const order = Array.from({ length: EVENTS }, (_, i) => i);
  if (arrival === 'time') {
    const at = order.map((i) => pool.eventAt(i).timestamp);
    order.sort((a, b) => (at[a]! < at[b]! ? -1 : at[a]! > at[b]! ? 1 : a - b));
  }
  return (i) => order[i]!;
}

/** The WAL's frames, counted by the page each one holds. */
function framesByPage(wal: Buffer): Map<number, number> {
  const pageSize = wal.readUInt32BE(8);
  const frames = new Map<number, number>();
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const page = wal.readUInt32BE(at);
    frames.set(page, (frames.get(page) ?? 0) + 1);
  }
  return frames;
}

function owners(path: string, frames: Map<number, number>, pageSize: number): Array<[string, number]> {
  const db = new Database(path, { readonly: true });
  const ownerOf = new Map(
    (db.prepare('SELECT pageno, name FROM dbstat').all() as Array<{ pageno: number; name: string }>).map((r) => [r.pageno, r.name]),
  );
  db.close();
  const bytes = new Map<string, number>();
  for (const [page, count] of frames) {
    const owner = ownerOf.get(page) ?? '(free pages)';
    bytes.set(owner, (bytes.get(owner) ?? 0) + count * pageSize);
  }
  return [...bytes].map(([owner, b]): [string, number] => [owner, Math.round(b / EVENTS)]).sort((a, b) => b[1] - a[1]);
}

/** One load on a fresh database; with `holdWal`, a reader keeps every frame in the WAL. */
async function load(pool: RequestPool, nth: (i: number) => number, holdWal: boolean) {
  const path = join(TMP, `disk-writes-${process.pid}.db`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  const receiver = createReceiver({ database: path, secret: SECRET, heartbeat: false });
  await receiver.ready();
  const reader = holdWal ? new Database(path, { readonly: true }) : undefined;
  reader?.exec('BEGIN');
  reader?.prepare('SELECT count(*) FROM inbox').get();
  const walBefore = statSync(`${path}-wal`).size;
  const before = written();
  const started = performance.now();
  for (let i = 0; i < EVENTS; i += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, EVENTS - i) }, (_, k) => {
        const r = pool.at(nth(i + k));
        return receiver.receive({
          rawBody: r.body,
          headers: { 'x-service-signature': r.signature, 'x-service-event': r.kind, 'content-type': 'application/json' },
        });
      }),
    );
  }
  await receiver.drain();
  const ms = performance.now() - started;
  const diskBytes = written() - before;
  const wal = holdWal ? readFileSync(`${path}-wal`) : undefined;
  reader?.exec('COMMIT');
  reader?.close();
  await receiver.close();
  const walBytes = wal === undefined ? 0 : wal.length - walBefore;
  const byOwner = wal === undefined ? [] : owners(path, framesByPage(wal), wal.readUInt32BE(8));
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  return { diskBytes, ms, walBytes, byOwner };
}

async function measure(pool: RequestPool, arrival: Arrival): Promise<Measured> {
  const nth = arrivals(pool, arrival);
  const plain = await load(pool, nth, false);
  const held = await load(pool, nth, true);
  return {
    arrival,
    diskBytesPerEvent: Math.round(plain.diskBytes / EVENTS),
    eventsPerSec: Math.round(EVENTS / (plain.ms / 1000)),
    walBytesPerEvent: Math.round(held.walBytes / EVENTS),
    walByOwner: held.byOwner,
  };
}

const pool = createRequestPool({ secret: SECRET, size: EVENTS });
console.log(
  `${EVENTS.toLocaleString('en')} distinct signed events, ${BATCH} at a time, received and projected in this process (${process.env.BENCH_DIST ?? 'dist/'})`,
);
console.log(`${'arrival'.padEnd(26)} ${'disk B/event'.padStart(12)} ${'WAL B/event'.padStart(11)} ${'events/s'.padStart(9)}`);
const results: Measured[] = [];
for (const arrival of ['pool', 'time'] as const) {
  const r = await measure(pool, arrival);
  results.push(r);
  const label = arrival === 'pool' ? 'pool order (stories)' : 'timestamp order (live)';
  console.log(
    `${label.padEnd(26)} ${r.diskBytesPerEvent.toLocaleString('en').padStart(12)} ${r.walBytesPerEvent.toLocaleString('en').padStart(11)} ${r.eventsPerSec.toLocaleString('en').padStart(9)}`,
  );
}
for (const r of results) {
  console.log(`\nWAL bytes an event by owner, ${r.arrival === 'pool' ? 'pool order' : 'timestamp order'}:`);
  for (const [owner, bytes] of r.walByOwner.filter(([, b]) => b >= 5))
    console.log(`  ${owner.padEnd(40)} ${bytes.toLocaleString('en').padStart(7)}`);
}
