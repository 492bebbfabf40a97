// Lag: at a fixed rate (half the measured maximum of `prequal-hooks serve`), the time from the
// 2xx to the event's projection being committed, seen from outside (a read-only poller on the
// SQLite file) and from inside (inbox.processed_at - inbox.received_at).
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { pacedSend, type RequestPool } from './load.js';
import { benchScript, distUrl } from './paths.js';
import { distribution } from './stats.js';
import type { LagResult, RunningServer } from './types.js';

const POLLER = benchScript('lag-poller.js');

/** What lag-poller.ts writes on SIGTERM: [inbox_id, identity, seenAtMs] of each row it saw leave 'pending'. */
export interface PollerOutput {
  polls: number;
  intervalMs: number;
  seen: [number, string, number][];
}

function startPoller(db: string, out: string, intervalMs: number): { ready: Promise<void>; stop: () => Promise<unknown> } {
  const child = spawn(process.execPath, [POLLER, '--db', db, '--out', out, '--interval-ms', String(intervalMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => String(c).includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`lag poller exited with ${code}`)));
  });
  return { ready, stop: async () => (child.kill('SIGTERM'), await exited) };
}

export interface LagRequest {
  startServe: (db: string) => Promise<RunningServer>;
  /** The frozen dist/ the servers run (eventIdentity is taken from it). */
  dist: string;
  pool: RequestPool;
  from: number;
  ratePerSec: number;
  durationSec: number;
  warmupSec: number;
  tmpDir: string;
  pollIntervalMs?: number;
}

export async function benchLag({
  startServe,
  dist,
  pool,
  from,
  ratePerSec,
  durationSec,
  warmupSec,
  tmpDir,
  pollIntervalMs = 2,
}: LagRequest): Promise<LagResult> {
  // prequal-hooks/events since 0.6.0; the root entry of the builds before it (BENCH_DIST).
  const { eventIdentity } = (await import(distUrl('events/public.js', dist)).catch(
    () => import(distUrl('index.js', dist)),
  )) as typeof import('prequal-hooks/events');
  const db = join(tmpDir, `lag-${process.pid}-${Date.now()}.db`);
  const out = `${db}.seen.json`;
  const server = await startServe(db);
  const poller = startPoller(db, out, pollIntervalMs);
  await poller.ready;
  const check = new Database(db, { readonly: true });
  const pendingCount = check.prepare(`SELECT COUNT(*) FROM inbox WHERE state = 'pending'`).pluck();
  const caughtUp = async () => {
    const deadline = Date.now() + 60_000;
    while ((pendingCount.get() as number) > 0 && Date.now() < deadline) await delay(20);
  };

  // Warm-up at the same rate, not measured: a cold process (JIT) cannot keep this rate for its
  // first second, and the backlog it builds would be charged to the receiver's steady state.
  const warm = await pacedSend({ url: server.url, pool, from, ratePerSec, durationSec: warmupSec });
  await caughtUp();
  const measuredFrom = from + warm.count;
  const lastWarmId = check.prepare('SELECT COALESCE(MAX(inbox_id), 0) FROM inbox').pluck().get() as number;

  const count = Math.round(ratePerSec * durationSec);
  const identities = new Array<string>(count);
  for (let k = 0; k < count; k++) identities[k] = eventIdentity(pool.eventAt(measuredFrom + k));

  const sent = await pacedSend({ url: server.url, pool, from: measuredFrom, ratePerSec, durationSec });

  // Wait until the dispatcher has caught up (nothing pending), then let the poller look once more.
  await caughtUp();
  await delay(50);
  await poller.stop();
  const inside = check
    .prepare('SELECT received_at, processed_at FROM inbox WHERE processed_at IS NOT NULL AND inbox_id > ?')
    .raw()
    .all(lastWarmId)
    .map((row) => {
      // ISO text, or Unix ms since migration 26.
      const [received, processed] = (row as Array<string | number>).map((at) => (typeof at === 'number' ? at : Date.parse(at)));
      return processed! - received!;
    });
  const stored = check.prepare('SELECT COUNT(*) FROM inbox WHERE inbox_id > ?').pluck().get(lastWarmId) as number;
  check.close();
  await server.stop();

  const { seen, polls } = JSON.parse(readFileSync(out, 'utf8')) as PollerOutput;
  const seenAt = new Map(seen.map(([, identity, at]) => [identity, at]));
  const lags: number[] = [];
  const acks: number[] = [];
  let acknowledged = 0;
  let neverSeen = 0;
  for (let k = 0; k < count; k++) {
    const status = sent.status[k]!;
    if (status < 200 || status > 299) continue;
    acknowledged++;
    const okAt = sent.okAt[k]!;
    acks.push(okAt - sent.sentAt[k]!);
    const at = seenAt.get(identities[k]!);
    if (at === undefined) neverSeen++;
    else lags.push(at - okAt);
  }
  for (const suffix of ['', '-wal', '-shm', '.seen.json', '.log']) rmSync(`${db}${suffix}`, { force: true });
  return {
    ratePerSec: Math.round(ratePerSec),
    warmupSec,
    durationSec,
    sent: count,
    sendSeconds: sent.sendSeconds,
    acknowledged,
    failures: sent.failures,
    stored,
    neverSeen,
    pollIntervalMs,
    polls,
    /** 2xx -> projection visible to a reader (ms); resolution: the poll interval. */
    ackToProjected: distribution(lags),
    /** inbox.processed_at - inbox.received_at (ms, both written by the receiver). */
    receivedToProcessed: distribution(inside),
    /** The sender's request -> 2xx at this rate (ms). */
    ackLatency: distribution(acks),
  };
}
