// Receivers' heartbeats: the rows that tell commands a receiver runs on the database. Written off
// the request path, never in the intake's way, never keeping a process alive, gone at close.
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { ConfigurationError } from '../../src/receive/intake.js';
import { createReceiver } from '../../src/receiver.js';
import { openStore } from '../../src/store/open.js';
import { isRunning } from '../../src/store/presence.js';
import { StoreUnavailableError, type Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { tempDir } from '../support/servers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const beatOf = (id: string, everyMs = 5000) => ({ receiver_id: id, pid: 4242, host: 'web-1', started_at: '2026-11-20T10:00:00.000Z', every_ms: everyMs });
const unsigned = (n: number) => ({ rawBody: Buffer.from(JSON.stringify(sampleEvent('credits.low', { data: { credits_remaining: n } }))), headers: {} });

describe.each(ENGINES)('heartbeats on the $name engine', (engine) => {
  async function open(): Promise<{ store: Store; database: string }> {
    const opened = await freshStore(engine);
    cleanups.push(opened.close);
    return { store: opened.store, database: opened.database as string };
  }

  it('a beat inserts or refreshes the row; its age grows until the next; forgetting removes it', async () => {
    const { store } = await open();
    await store.beat(beatOf('a'));
    await store.beat(beatOf('b', 200));
    const [first] = await store.receivers();
    expect(first).toMatchObject({ pid: 4242, host: 'web-1', started_at: '2026-11-20T10:00:00.000Z' });
    expect((await store.receivers()).map((r) => r.receiver_id).sort()).toEqual(['a', 'b']);
    await sleep(700);
    const aged = new Map((await store.receivers()).map((r) => [r.receiver_id, r]));
    expect(aged.get('b')!.age_ms).toBeGreaterThanOrEqual(600);
    expect(isRunning(aged.get('b')!)).toBe(false); // 3 beats of 200 ms missed
    expect(isRunning(aged.get('a')!)).toBe(true);
    await store.beat(beatOf('b', 200));
    const refreshed = (await store.receivers())[0]!;
    expect(refreshed.receiver_id).toBe('b'); // the most recently seen first
    expect(refreshed.age_ms).toBeLessThan(300);
    await store.forgetReceivers(['a', 'b', 'never-there']);
    await store.forgetReceivers([]);
    expect(await store.receivers()).toEqual([]);
  });

  it('a receiver keeps its row while it runs, refreshed every everyMs, and removes it when it closes', async () => {
    const { store } = await open();
    const receiver = createReceiver({ database: store, allowUnsigned: true, heartbeat: { everyMs: 100 }, logger: createLogger({ level: 'silent' }) });
    await receiver.ready();
    const [row] = await store.receivers();
    expect(row).toMatchObject({ pid: process.pid, host: hostname(), every_ms: 100 });
    for (let i = 0; i < 4; i++) {
      await sleep(150);
      expect((await store.receivers())[0]!.age_ms).toBeLessThan(300);
    }
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

  async function sqliteStore(): Promise<{ store: Store; path: string }> {
    const tmp = tempDir();
    const store = await openStore(tmp.dbPath);
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
    await sleep(450);
    expect(beats).toBeGreaterThanOrEqual(3);
    const logged = lines.filter((l) => l.msg === 'receiver heartbeat not written; the next one retries');
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(logged.every((l) => l.level === 20 && l.code === 'SQLITE_BUSY')).toBe(true);
    expect(lines.filter((l) => (l.level as number) > 20)).toEqual([]);
  });

  it('a beat that never settles holds up neither ready() (one interval at most), nor the intake, nor close()', async () => {
    const { store } = await sqliteStore();
    const hanging: Store = { ...store, beat: () => new Promise<void>(() => undefined) };
    const receiver = createReceiver({ database: hanging, allowUnsigned: true, heartbeat: { everyMs: 300 }, logger: createLogger({ level: 'silent' }) });
    const started = performance.now();
    await receiver.ready();
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await receiver.receive(unsigned(1))).answer.status).toBe(200);
    // The row's removal waits a quarter of close's time at most (500 ms), not all of it.
    const closing = performance.now();
    await receiver.close(2000);
    expect(performance.now() - closing).toBeLessThan(1200);
    expect(await store.counts()).toMatchObject({ pending: 0, projected: 1 });
  });

  it('on a SQLite file another connection holds locked, a beat fails at once instead of waiting, and the next one after the lock writes', async () => {
    const { store, path } = await sqliteStore();
    const locker = new Database(path);
    cleanups.push(() => void locker.close());
    locker.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    await expect(store.beat(beatOf('locked'))).rejects.toMatchObject({ name: 'StoreUnavailableError', code: expect.stringMatching(/^SQLITE_BUSY/) });
    expect(performance.now() - started).toBeLessThan(100);

    const receiver = createReceiver({ database: store, allowUnsigned: true, heartbeat: { everyMs: 100 }, logger: createLogger({ level: 'silent' }) });
    cleanups.push(() => receiver.close());
    await receiver.ready();
    expect(await store.receivers()).toEqual([]);
    locker.exec('ROLLBACK');
    await sleep(250);
    expect(await store.receivers()).toEqual([expect.objectContaining({ pid: process.pid })]);
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
    expect(() => createReceiver({ database: ':memory:', allowUnsigned: true, heartbeat: { everyMs: 1.5e3 + 0.5 } })).toThrow(/whole number of milliseconds from 100/);
  });
});
