// Receivers' heartbeats: the rows that tell commands a receiver runs on the database. Written off
// the request path, never in the intake's way, never keeping a process alive, gone at close.
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { ConfigurationError } from '../../src/errors.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { openStore, type StoreOptions } from '../../src/store/open.js';
import { isRunning } from '../../src/store/presence.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';

import { ENGINES, freshStore } from '../support/engines.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const beatOf = (id: string, everyMs = 5000) => ({
  receiver_id: id,
  pid: 4242,
  host: 'web-1',
  started_at: '2026-11-20T10:00:00.000Z',
  every_ms: everyMs,
});
/**
 * Settles as `work` does, or rejects once `ms` passed: for "it does not wait", with a deadline far
 * beyond what it should take and far below what waiting would take, so that load cannot fail it.
 */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The store, with the instants (performance.now) at which each of its beats started and ended. */
function countingBeats(store: Store): { store: Store; beats: Array<{ started: number; ended: number }> } {
  const beats: Array<{ started: number; ended: number }> = [];
  const beat: Store['beat'] = async (row) => {
    const started = performance.now();
    await store.beat(row);
    beats.push({ started, ended: performance.now() });
  };
  return { store: { ...store, beat }, beats };
}

const unsigned = (n: number) => ({
  rawBody: Buffer.from(JSON.stringify(sampleEvent('credits.low', { data: { credits_remaining: n } }))),
  headers: {},
});

describe.each(ENGINES)('heartbeats on the $name engine', (engine) => {
  async function open(): Promise<{ store: Store; database: string }> {
    const opened = await freshStore(engine);
    cleanups.push(opened.close);
    return { store: opened.store, database: opened.database };
  }

  it('a beat inserts or refreshes the row; its age grows until the next; forgetting removes it', async () => {
    const { store } = await open();
    await store.beat(beatOf('a'));
    await store.beat(beatOf('b', 200));
    const [first] = await store.receivers();
    expect(first).toMatchObject({ pid: 4242, host: 'web-1', started_at: '2026-11-20T10:00:00.000Z' });
    expect((await store.receivers()).map((r) => r.receiver_id).sort()).toEqual(['a', 'b']);
    // Its age grows until it is more than 3 of its 200 ms beats: gone; a's 5 s beats are not missed.
    const aged = await waitFor(
      async () => {
        const rows = new Map((await store.receivers()).map((r) => [r.receiver_id, r]));
        return rows.get('b')!.age_ms > 600 ? rows : undefined;
      },
      10_000,
      "b's age to pass 3 beats",
    );
    expect(isRunning(aged.get('b')!)).toBe(false);
    expect(isRunning(aged.get('a')!)).toBe(true);
    const beating = performance.now();
    await store.beat(beatOf('b', 200));
    const refreshed = (await store.receivers())[0]!;
    expect(refreshed.receiver_id).toBe('b'); // the most recently seen first
    // Its age starts again from the beat: at most the time since the beat began (1 ms of rounding).
    expect(refreshed.age_ms).toBeLessThanOrEqual(performance.now() - beating + 1);
    expect(isRunning(refreshed)).toBe(true);
    await store.forgetReceivers(['a', 'b', 'never-there']);
    await store.forgetReceivers([]);
    expect(await store.receivers()).toEqual([]);
  });

  it('a receiver keeps its row while it runs, refreshed every everyMs, and removes it when it closes', async () => {
    const { store } = await open();
    const counted = countingBeats(store);
    const receiver = createReceiver({
      database: counted.store,
      allowUnsigned: true,
      heartbeat: { everyMs: 100 },
      logger: createLogger({ level: 'silent' }),
    });
    await receiver.ready();
    const [row] = await store.receivers();
    expect(row).toMatchObject({ pid: process.pid, host: hostname(), every_ms: 100 });
    // Each beat refreshes the row: after the 5th, its age is at most the time since that beat began.
    const fifth = await waitFor(() => counted.beats[4], 10_000, '5 beats');
    const [after] = await store.receivers();
    expect(after).toMatchObject({ pid: process.pid, every_ms: 100 });
    expect(after!.age_ms).toBeLessThanOrEqual(performance.now() - fifth.started + 1);
    // Every everyMs, not more often (a timer never fires early; 1 ms of rounding).
    const gaps = counted.beats.slice(1, 5).map((beat, i) => beat.started - counted.beats[i]!.started);
    expect(gaps.filter((gap) => gap < 99)).toEqual([]);
    await receiver.close();
    expect(await store.receivers()).toEqual([]);
  });

  it('heartbeat: false writes none', async () => {
    const { store } = await open();
    const receiver = createReceiver({ database: store, allowUnsigned: true, heartbeat: false, logger: createLogger({ level: 'silent' }) });
    await receiver.ready();
    expect((await receiver.receive(unsigned(1))).answer.status).toBe(200);
    await receiver.drain();
    expect(await store.receivers()).toEqual([]);
    await receiver.close();
  });
});

describe('a heartbeat is never in the way', () => {
  function debugLines(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        done();
      },
    });
    return { logger: createLogger({ level: 'debug' }, sink), lines };
  }

  async function sqliteStore(options: StoreOptions = {}): Promise<{ store: Store; path: string }> {
    const tmp = tempDir();
    const store = await openStore(tmp.dbPath, options);
    cleanups.push(tmp.cleanup, () => store.close());
    return { store, path: tmp.dbPath };
  }

  it('a beat that fails is logged at debug and retried at the next; the intake answers meanwhile', async () => {
    const { store } = await sqliteStore();
    let beats = 0;
    const failing: Store = {
      ...store,
      beat: async () => {
        beats++;
        throw new StoreUnavailableError('SQLITE_BUSY', 'database is locked');
      },
    };
    const { logger, lines } = debugLines();
    const receiver = createReceiver({ database: failing, allowUnsigned: true, heartbeat: { everyMs: 100 }, logger });
    cleanups.push(() => receiver.close());
    await receiver.ready();
    expect((await receiver.receive(unsigned(1))).answer.status).toBe(200);
    const notWritten = () => lines.filter((l) => l.msg === 'receiver heartbeat not written; the next one retries');
    const logged = await waitFor(() => (notWritten().length >= 3 ? notWritten() : undefined), 10_000, '3 failed beats logged');
    expect(beats).toBeGreaterThanOrEqual(3);
    expect(logged.slice(0, 3)).toEqual(Array.from({ length: 3 }, () => expect.objectContaining({ level: 20, code: 'SQLITE_BUSY' })));
    expect(lines.filter((l) => (l.level as number) > 20)).toEqual([]);
  });

  it('a beat that never settles holds up neither ready() (one interval at most), nor the intake, nor close()', async () => {
    const { store } = await sqliteStore();
    const hanging: Store = { ...store, beat: () => new Promise<void>(() => undefined) };
    const receiver = createReceiver({
      database: hanging,
      allowUnsigned: true,
      heartbeat: { everyMs: 300 },
      logger: createLogger({ level: 'silent' }),
    });
    // ready() waits one interval (300 ms) for the first beat; held up, it would never settle.
    await within(receiver.ready(), 10_000, 'ready() behind a beat that never settles');
    expect((await receiver.receive(unsigned(1))).answer.status).toBe(200);
    // The row's removal waits 500 ms at most (a quarter of close's time, up to 500 ms), not all of
    // the 20 s close was given: 10 s is far beyond the first, far below the second.
    await within(receiver.close(20_000), 10_000, 'close(20 s) behind a beat that never settles');
    expect(await store.counts()).toMatchObject({ pending: 0, projected: 1 });
  });

  it('on a SQLite file another connection holds locked, a beat fails at once instead of waiting, and the next one after the lock writes', async () => {
    // Writes wait up to 20 s for the lock here: a beat that waited as they do would miss the 10 s deadline.
    const { store, path } = await sqliteStore({ busyTimeoutMs: 20_000 });
    const locker = new Database(path);
    cleanups.push(() => void locker.close());
    locker.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    await expect(store.beat(beatOf('locked'))).rejects.toMatchObject({
      name: 'StoreUnavailableError',
      code: expect.stringMatching(/^SQLITE_BUSY/),
    });
    // A wait in SQLite would block the event loop (no timer could fire): measured, not raced.
    expect(performance.now() - started).toBeLessThan(10_000);

    const receiver = createReceiver({
      database: store,
      allowUnsigned: true,
      heartbeat: { everyMs: 100 },
      logger: createLogger({ level: 'silent' }),
    });
    cleanups.push(() => receiver.close());
    await receiver.ready();
    expect(await store.receivers()).toEqual([]);
    locker.exec('ROLLBACK');
    const rows = await waitFor(
      async () => {
        const found = await store.receivers();
        return found.length > 0 ? found : undefined;
      },
      10_000,
      'a beat after the lock',
    );
    expect(rows).toEqual([expect.objectContaining({ pid: process.pid, every_ms: 100 })]);
  });

  it('does not keep the process alive: a script that never closes its receiver exits by itself', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const script = `import { createReceiver } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
      const receiver = createReceiver({ database: ${JSON.stringify(tmp.dbPath)}, allowUnsigned: true, heartbeat: { everyMs: 100 } });
      await receiver.ready();
      process.stdout.write('ready\\n');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error('the script did not exit by itself'));
      }, 10_000);
      child.once('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(stdout).toBe('ready\n');
    expect(code).toBe(0);
  });

  it('a heartbeat interval under 100 ms is a configuration error', () => {
    expect(() => createReceiver({ database: ':memory:', allowUnsigned: true, heartbeat: { everyMs: 10 } })).toThrow(ConfigurationError);
    expect(() => createReceiver({ database: ':memory:', allowUnsigned: true, heartbeat: { everyMs: 1.5e3 + 0.5 } })).toThrow(
      /whole number of milliseconds from 100/,
    );
  });
});
