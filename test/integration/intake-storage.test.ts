import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { listen, post, tempDir } from '../support/servers.js';

const SECRET = 'whsec_storage_51d0';

describe('when the database cannot take the write', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(busyTimeoutMs = 150) {
    const tmp = tempDir();
    const db = new Database(tmp.dbPath);
    const receiver = createReceiver({ database: db, secret: SECRET, busyTimeoutMs, logger: createLogger({ level: 'silent' }) });
    const server = await listen(receiver.nodeHandler());
    cleanups.push(
      tmp.cleanup,
      () => void db.close(),
      () => receiver.close(),
      server.close,
    );
    return { tmp, db, receiver, url: `${server.url}/webhooks` };
  }

  const send = (url: string, n: number) => {
    const request = signedRequest(
      sampleEvent('candidate.added', { data: { candidate_id: `c-${n}`, phone: `+3361234${String(n).padStart(4, '0')}` } }),
      { secret: SECRET },
    );
    return post(url, request.body, request.headers);
  };

  it('answers 503 STORAGE_UNAVAILABLE with Retry-After while another connection holds the write lock, then 2xx', async () => {
    const { tmp, url } = await start();
    const locker = new Database(tmp.dbPath);
    locker.pragma('busy_timeout = 0');
    locker.exec('BEGIN IMMEDIATE');
    const refused = await send(url, 1);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.body.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', details: { cause: 'SQLITE_BUSY' } });
    locker.exec('ROLLBACK');
    const accepted = await send(url, 1);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ received: true, duplicate: false });
    expect(locker.prepare('SELECT COUNT(*) FROM inbox').pluck().get()).toBe(1);
    locker.close();
  });

  it('answers 503 when the disk is full (max_page_count reached), never 2xx, and recovers', async () => {
    const { db, url } = await start();
    expect((await send(url, 1)).status).toBe(200);
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const statuses: number[] = [];
    for (let n = 2; n < 40; n++) statuses.push((await send(url, n)).status);
    expect(statuses).toContain(503);
    expect(statuses.every((s) => s === 503 || s === 200)).toBe(true);
    // Every 2xx is a row; every 503 is not.
    const stored = db.prepare('SELECT COUNT(*) FROM inbox').pluck().get() as number;
    expect(stored).toBe(1 + statuses.filter((s) => s === 200).length);
    db.pragma('max_page_count = 1073741823');
    expect((await send(url, 99)).status).toBe(200);
  });

  it('answers 503 when the database is read-only', async () => {
    const tmp = tempDir();
    const db = new Database(tmp.dbPath);
    const receiver = createReceiver({ database: db, secret: SECRET, logger: createLogger({ level: 'silent' }) });
    cleanups.push(
      tmp.cleanup,
      () => void db.close(),
      () => receiver.close(),
    );
    db.pragma('query_only = ON');
    const request = signedRequest(sampleEvent('credits.low'), { secret: SECRET });
    const result = await receiver.receive({ rawBody: request.body, headers: request.headers });
    expect(result.answer.status).toBe(503);
  });
});

describe('logs', () => {
  it('never contain the secret, the signature or candidate PII', async () => {
    const tmp = tempDir();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: 'trace' }, sink);
    const receiver = createReceiver({
      database: tmp.dbPath,
      secret: SECRET,
      busyTimeoutMs: 50,
      logger,
      onRequest: (result) => logger.info({ status: result.answer.status, kind: result.kind, outcome: result.outcome }, 'webhook'),
    });
    const server = await listen(receiver.nodeHandler());
    const event = sampleEvent('candidate.interview.completed');
    const request = signedRequest(event, { secret: SECRET });
    request.headers['x-service-event'] = 'candidate.added'; // provoke the mismatch warning
    await post(server.url, request.body, request.headers);
    await post(server.url, request.body, { ...request.headers, 'x-service-signature': `sha256=${'0'.repeat(64)}` });
    await receiver.drain(); // the lock is taken below on this thread: nothing of the receiver's may hold it then
    const locker = new Database(tmp.dbPath);
    locker.exec('BEGIN IMMEDIATE');
    const other = signedRequest(sampleEvent('candidate.added'), { secret: SECRET });
    expect((await post(server.url, other.body, other.headers)).status).toBe(503);
    locker.exec('ROLLBACK');
    locker.close();
    await server.close();
    await receiver.close();
    tmp.cleanup();

    const text = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(text).toContain('event header differs');
    for (const secretOrPii of [
      SECRET,
      request.headers['x-service-signature']!,
      event.data.first_name!,
      event.data.last_name!,
      event.data.email!,
      event.data.phone!,
    ]) {
      expect(text).not.toContain(secretOrPii);
    }
  });

  it('redacts PII and secrets even when a caller logs them', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) });
    createLogger({}, sink).info({ data: { email: 'a@b.fr', phone: '+33612345678' }, secret: 's3cr3t', first_name: 'Éloïse' }, 'oops');
    expect(lines.join('')).not.toMatch(/a@b\.fr|\+33612345678|s3cr3t|Éloïse/);
  });
});
