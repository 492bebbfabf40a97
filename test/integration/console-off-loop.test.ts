// The console's reads on SQLite run off the event loop (src/store/sqlite/off-loop-reads.ts): a
// search over a large inbox never holds a webhook, a read-only connection answers as the main one
// did (same rows, same errors), and a closed receiver leaves no thread holding the process.
import { spawn } from 'node:child_process';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { closeReaderThread, readerThread, threadReads } from '../../src/store/sqlite/off-loop-reads.js';
import { openStore } from '../../src/store/open.js';
import { createReadModel } from '../../src/store/read-model-sql.js';
import { SQLITE_READ_DIALECT } from '../../src/store/sqlite/read-model.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { listen, tempDir } from '../support/servers.js';

const TOKEN = 'console-off-loop-token-5d2a';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const SECRET = 'off-loop-secret';
// Enough rows that a search reading every body takes a good part of a second.
const ROWS = 250_000;

/** Fills the inbox with set-aside rows whose bodies name campaigns: what a console search reads one by one. */
function fillInbox(path: string, rows: number): void {
  const file = new Database(path);
  file.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
    INSERT INTO inbox (received_at, raw, identity, kind, verdict, state, processed_at)
    SELECT '2026-11-01T00:00:00.000Z',
           CAST(json_object('event', 'candidate.note', 'timestamp', '2026-11-01T00:00:00Z',
                'data', json_object('campaign_id', 'cmp_' || (i % 50), 'candidate_id', 'cand_' || i, 'note', hex(randomblob(60)))) AS BLOB),
           'filled-' || i, 'candidate.note', 'accepted', 'unknown', '2026-11-01T00:00:00.000Z' FROM n`);
  file.close();
}

describe('console reads on a large SQLite inbox', () => {
  const tmp = tempDir();
  let receiver: Receiver;
  let server: { url: string; close: () => Promise<void> };
  let searchArrived: Promise<void>;

  beforeAll(async () => {
    await (await openStore(tmp.dbPath)).close();
    fillInbox(tmp.dbPath, ROWS);
    receiver = createReceiver({ database: tmp.dbPath, secret: SECRET });
    await receiver.ready();
    const app = express();
    let arrived!: () => void;
    searchArrived = new Promise((resolve) => (arrived = resolve));
    // Told when the search reaches the console, just before its route runs.
    app.use('/ops', (req, _res, next) => (req.query.campaign === 'cmp_none' && arrived(), next()), receiver.dashboard({ token: TOKEN }));
    app.post('/webhooks', receiver.middleware());
    server = await listen(app as never);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    tmp.cleanup();
  });

  it('answers a webhook sent while a search reads the whole inbox before the search ends', async () => {
    const order: string[] = [];
    const search = fetch(`${server.url}/ops/api/events?campaign=cmp_none`, { headers: AUTH }).then(async (answer) => {
      order.push('search');
      return { status: answer.status, body: (await answer.json()) as { events: unknown[] } };
    });
    await searchArrived;
    const request = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    const webhook = await fetch(`${server.url}/webhooks`, { method: 'POST', headers: request.headers, body: request.body });
    order.push('webhook');
    expect(webhook.status).toBe(200);
    const searched = await search;
    expect(searched).toEqual({ status: 200, body: expect.objectContaining({ events: [] }) as unknown });
    expect(order).toEqual(['webhook', 'search']);
  });

  it('reads while another connection holds the write lock, as the main connection did', async () => {
    const locker = new Database(tmp.dbPath, { timeout: 0 });
    locker.exec('BEGIN IMMEDIATE');
    locker.exec(`UPDATE inbox SET attempts = attempts + 1 WHERE inbox_id = 1`);
    try {
      const answer = await fetch(`${server.url}/ops/api/events?limit=1&state=unknown`, { headers: AUTH });
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { events: Array<{ attempts: number }> }).events[0]?.attempts).toBe(0);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
  });

  it('keeps reading a database file moved away while it runs, as the main connection does', async () => {
    const moved = join(tmp.dir, 'moved.db');
    renameSync(tmp.dbPath, moved);
    try {
      const answer = await fetch(`${server.url}/ops/api/events?limit=1`, { headers: AUTH });
      expect(answer.status).toBe(200);
    } finally {
      renameSync(moved, tmp.dbPath);
    }
  });

  it('gives up a read that takes too long as a storage fault, and lets its thread go', async () => {
    const thread = readerThread({ path: tmp.dbPath, busyTimeoutMs: 0 }, 50)!;
    const store = await openStore(tmp.dbPath);
    try {
      const reads = threadReads(thread, 'default', store);
      const failure = await reads.readModel.listEvents({ campaign: 'cmp_none' }, { limit: 1 }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect(failure).toMatchObject({ code: 'TIMEOUT' });
      expect(thread.life.state).toBe('idle');
    } finally {
      await closeReaderThread(thread);
      await store.close();
    }
  });

  it("reads the backlog's age (on the main connection, for /metrics) through the index of pending rows only", async () => {
    const file = new Database(tmp.dbPath, { readonly: true });
    try {
      const plans: string[] = [];
      const explained = <R>({ text, values }: { text: string; values: unknown[] }): Promise<R[]> => {
        const rows = file.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...values) as Array<{ detail: string }>;
        plans.push(...rows.map((row) => row.detail));
        return Promise.resolve([]);
      };
      await createReadModel(SQLITE_READ_DIALECT, explained, 'default').oldestPending();
      expect(plans).toEqual([expect.stringContaining('USING INDEX inbox_pending')]);
    } finally {
      file.close();
    }
  });

  it('refuses reads once closed as a closed database, with the same error class', async () => {
    const store = await openStore(tmp.dbPath);
    expect(await store.readModel.kinds()).toContain('candidate.note');
    await store.close();
    await expect(store.readModel.kinds()).rejects.toMatchObject({ name: 'StoreUnavailableError', code: 'CLOSED' });
    await expect(store.people.latestErasures(1)).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('a closed receiver', () => {
  it('leaves no reader thread holding the process: it exits by itself, a read in flight refused or answered', async () => {
    const tmp = tempDir();
    try {
      const child = spawn(process.execPath, [join(import.meta.dirname, '../support/reader-close-app.mjs'), tmp.dbPath], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exit = await new Promise<number | null>((resolve) => {
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', (code) => (clearTimeout(killer), resolve(code)));
      });
      expect(output).toMatch(/^campaigns 0\nin flight: (answered|StoreUnavailableError CLOSED)\nclosed\n$/);
      expect(exit).toBe(0);
    } finally {
      tmp.cleanup();
    }
  });
});
