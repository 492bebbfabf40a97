// Another connection holds SQLite's write lock (a backup, a sqlite3 shell, a migration) while
// webhooks arrive: the event loop must stay free, every webhook must get its answer in time, and
// everything acknowledged must be projected once the lock is released.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { startStandalone, type Standalone } from '../../src/standalone/start-standalone.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_lock_1f4a';

describe('a SQLite write lock held by another connection', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('never freezes the process: 503s in time, health answered, and every 2xx projected after', async () => {
    const tmp = tempDir();
    const standalone: Standalone = await startStandalone({
      database: tmp.dbPath,
      secrets: [SECRET],
      logger: createLogger({ level: 'silent' }),
      port: 0,
      host: '127.0.0.1',
    });
    cleanups.push(tmp.cleanup, () => standalone.close(2000));
    // The other connection, as a backup or a sqlite3 shell would hold it (here in this process:
    // it takes the lock without blocking the event loop the receiver runs on).
    const locker = new Database(tmp.dbPath, { timeout: 0 });
    cleanups.push(() => locker.close());
    const takeLock = () =>
      waitFor(
        () => {
          try {
            locker.exec('BEGIN IMMEDIATE');
            return true;
          } catch {
            return false; // busy: the receiver is writing
          }
        },
        10_000,
        'the write lock, for the other connection',
        { everyMs: 5 },
      );

    const delay = monitorEventLoopDelay({ resolution: 5 });
    const send = async (n: number) => {
      const event = sampleEvent('candidate.added', { data: { candidate_id: `l-${n}` } });
      const request = signedRequest(event, { secret: SECRET });
      const started = performance.now();
      const response = await fetch(`${standalone.url}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
      await response.arrayBuffer();
      return { status: response.status, retryAfter: response.headers.get('retry-after'), ms: performance.now() - started, id: `l-${n}` };
    };

    await standalone.receiver.drain(); // its start-up work done: the lock then meets webhooks only
    await takeLock();
    delay.enable();
    const lockedFor = 3000;
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        locker.exec('COMMIT');
        resolve();
      }, lockedFor),
    );
    // 8 senders while the lock is held, and health checks beside them, one after the other until
    // every sender has its answer.
    const answers = Promise.all(Array.from({ length: 8 }, (_, w) => send(w)));
    let answered = false;
    void answers.finally(() => (answered = true));
    const health: number[] = [];
    while (!answered || health.length < 10) {
      const started = performance.now();
      const response = await fetch(`${standalone.url}/healthz`);
      expect(response.status).toBe(200);
      health.push(performance.now() - started);
    }
    const during = await answers;
    await released;
    delay.disable();

    // Each webhook is answered inside the sender's 5 s: 2xx once stored (a write that got the lock
    // when it was released), otherwise 503 with Retry-After.
    expect(
      during.some((a) => a.status === 503),
      JSON.stringify(during),
    ).toBe(true);
    for (const answer of during) {
      expect([200, 503]).toContain(answer.status);
      if (answer.status === 503) expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(answer.ms).toBeLessThan(5000);
    }
    // Health answered throughout (loose bound: this checks the loop was free, not its speed).
    expect(Math.max(...health)).toBeLessThan(1000);
    // No synchronous wait on the lock: the longest stall is nowhere near the lock's 2 s wait.
    expect(delay.max / 1e6).toBeLessThan(1000);

    // Once released, the same webhooks are stored and projected.
    const after = await Promise.all(Array.from({ length: 8 }, (_, w) => send(w)));
    expect(after.map((a) => a.status)).toEqual(Array(8).fill(200));
    await standalone.receiver.drain();
    for (const a of after) expect((await standalone.receiver.query.getCandidate(a.id))?.status).toBe('pending');
  });
});
