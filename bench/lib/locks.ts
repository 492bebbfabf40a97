// Another connection holds SQLite's write lock for 10 s while 8 senders post: every webhook must be
// answered within 5 s (2xx once stored, 503 otherwise), /healthz within 100 ms, the event loop
// never stalled past 50 ms, and everything acknowledged projected once the lock is released.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import Database from 'better-sqlite3';
import type { RequestPool } from './load.js';
import { startServer } from './processes.js';
import type { LocksResult, ServerCommand } from './types.js';

/** An HTTP answer's status (0: no answer) and how long it took. */
interface Answer {
  status: number;
  ms: number;
}

export interface LocksRequest {
  /** serve-stalls: it prints its longest event-loop stall on SIGTERM. */
  command: ServerCommand;
  db: string;
  pool: RequestPool;
  lockSec?: number;
  senders?: number;
}

function post(url: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = httpRequest(`${url}/webhooks`, { method: 'POST', headers: { ...headers, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

function get(url: string): Promise<Answer> {
  return new Promise((resolve) => {
    const started = performance.now();
    httpRequest(url, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    })
      .on('error', () => resolve({ status: 0, ms: performance.now() - started }))
      .end();
  });
}

export async function benchLocks({ command, db, pool, lockSec = 10, senders = 8 }: LocksRequest): Promise<LocksResult> {
  const server = await startServer(command);
  const locker = new Database(db, { timeout: 0 });
  for (;;) {
    try {
      locker.exec('BEGIN IMMEDIATE');
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  const lockedAt = performance.now();
  const answers: Answer[] = [];
  const acknowledged: number[] = [];
  let next = 0;
  const sender = async () => {
    while (performance.now() - lockedAt < lockSec * 1000) {
      const i = next++;
      const r = pool.at(i);
      const answer = await post(server.url, r.body, {
        'content-type': 'application/json',
        'x-service-signature': r.signature,
        'x-service-event': r.kind,
      });
      answers.push(answer);
      if (answer.status === 200) acknowledged.push(i);
    }
  };
  const health: Answer[] = [];
  const healthLoop = (async () => {
    while (performance.now() - lockedAt < lockSec * 1000) {
      health.push(await get(`${server.url}/healthz`));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await Promise.all([...Array.from({ length: senders }, sender), healthLoop]);
  locker.exec('COMMIT');
  // Once released, what was acknowledged (during and after) is projected.
  const after = await Promise.all(
    Array.from({ length: senders }, () =>
      post(server.url, pool.at(next).body, { 'content-type': 'application/json', 'x-service-signature': pool.at(next++).signature }),
    ),
  );
  let pending = -1;
  for (let i = 0; i < 200 && pending !== 0; i++) {
    pending = locker.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get() as number;
    if (pending !== 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const stored = locker.prepare('SELECT COUNT(*) FROM inbox').pluck().get() as number;
  locker.close();
  await server.stop();
  const stalls =
    readFileSync(command.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{"stalls"'))
      .map((l) => (JSON.parse(l) as { stalls: { maxMs: number; p99Ms: number } }).stalls)[0] ?? null;
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return {
    lockSec,
    senders,
    webhooks: answers.length,
    statuses,
    slowestAnswerMs: Math.round(Math.max(...answers.map((a) => a.ms))),
    healthChecks: health.length,
    slowestHealthMs: Math.round(Math.max(...health.map((h) => h.ms)) * 10) / 10,
    longestStallMs: stalls ? Math.round(stalls.maxMs * 10) / 10 : null,
    afterRelease: after.map((a) => a.status),
    pendingAfterRelease: pending,
    everyAcknowledgedStored: stored >= acknowledged.length,
  };
}
