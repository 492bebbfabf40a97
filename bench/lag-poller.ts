#!/usr/bin/env node
// Watches a receiver's database read-only and notes when each event's projection became visible
// (its inbox row left 'pending'): wall-clock ms, comparable with the sender's 2xx times.
// Prints "ready" once polling; on SIGTERM writes {polls, seen: [[inbox_id, identity, seenAtMs], …]}
// to --out. seenAtMs is taken just before the query whose snapshot first showed the row: the
// projection committed before it, and after the previous poll began.
//
//   node build/bench/lag-poller.js --db <file> --out <file.json> [--interval-ms 2]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { PollerOutput } from './lib/lag.js';

const { values } = parseArgs({
  options: { db: { type: 'string' }, out: { type: 'string' }, 'interval-ms': { type: 'string', default: '2' } },
});
const intervalMs = Number(values['interval-ms']);
if (!values.db || !values.out) {
  console.error('usage: node build/bench/lag-poller.js --db <file> --out <file.json> [--interval-ms 2]');
  process.exit(2);
}
const out = values.out;
const db = new Database(values.db, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 1000');
// Rows are projected in inbox order (the dispatcher walks pending rows by id), so the rows seen
// so far are a prefix, and `inbox_id > cursor` finds the new ones.
const fresh = db.prepare(`SELECT inbox_id, identity FROM inbox WHERE inbox_id > ? AND state <> 'pending' ORDER BY inbox_id`).raw();
const seen: PollerOutput['seen'] = [];
let cursor = 0;
let polls = 0;
let stopping = false;

function poll(): void {
  const at = performance.timeOrigin + performance.now();
  const rows = fresh.all(cursor);
  polls++;
  // The identity is stored as its bytes since migration 24 (hex before).
  for (const [id, stored] of rows as [number, string | Buffer][]) {
    const identity = typeof stored === 'string' ? stored : stored.toString('hex');
    seen.push([id, identity, at]);
    cursor = id;
  }
  if (!stopping) setTimeout(poll, intervalMs);
}

process.once('SIGTERM', () => {
  stopping = true;
  poll();
  db.close();
  writeFileSync(out, JSON.stringify({ polls, intervalMs, seen } satisfies PollerOutput));
  process.exit(0);
});
poll();
process.stdout.write('ready\n');
