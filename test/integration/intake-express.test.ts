import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sign } from '../../src/signature.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { listen, post, tempDir } from '../support/servers.js';
import { asStoreReads } from '../support/bodies.js';

const SECRET = 'whsec_integration_8c1f';
const FIXTURES = join(import.meta.dirname, '../../fixtures');

describe('Express middleware on a real app and a real SQLite file', () => {
  const tmp = tempDir();
  let receiver: Receiver;
  let server: { url: string; close: () => Promise<void> };
  let url: string;
  let reader: Database.Database;

  beforeAll(async () => {
    receiver = createReceiver({ database: tmp.dbPath, secret: SECRET, maxBodyBytes: 64 * 1024 });
    const app = express();
    // The host app parses JSON everywhere else; the webhook route is mounted before it.
    app.post('/webhooks', receiver.middleware());
    app.post('/raw-first', express.raw({ type: '*/*' }), receiver.middleware());
    app.use(express.json());
    app.post('/api/echo', (req, res) => {
      res.json(req.body);
    });
    app.post('/parsed-first', express.json(), receiver.middleware());
    server = await listen(app as never);
    url = `${server.url}/webhooks`;
    reader = new Database(tmp.dbPath, { readonly: true });
  });

  afterAll(async () => {
    reader.close();
    await server.close();
    await receiver.close();
    tmp.cleanup();
  });

  // Each row as the store reads it (the inbox stores bodies compact, identities as bytes).
  const inboxRows = () => (reader.prepare('SELECT * FROM inbox ORDER BY inbox_id').all() as any[]).map(asStoreReads);

  it('stores a signed event and answers 200 {received, duplicate:false}', async () => {
    const event = sampleEvent('candidate.added');
    const request = signedRequest(event, { secret: SECRET });
    const answer = await post(url, request.body, request.headers);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ received: true, duplicate: false });
    const rows = inboxRows();
    expect(rows).toHaveLength(1);
    expect(Buffer.compare(rows[0].raw, request.body)).toBe(0);
    expect(rows[0]).toMatchObject({ kind: 'candidate.added', verdict: 'accepted' });
    await receiver.drain();
    expect(inboxRows()[0].state).toBe('projected');
    expect(rows[0].identity).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].secret_id).toMatch(/^[0-9a-f]{12}$/);
  });

  it('stores a duplicate once, even with other key order and spacing', async () => {
    const event = sampleEvent('credits.low');
    const first = signedRequest(event, { secret: SECRET });
    const respaced = JSON.stringify({ data: event.data, timestamp: event.timestamp, event: event.event }, null, 3);
    const second = signedRequest(respaced, { secret: SECRET });
    const before = inboxRows().length;
    expect((await post(url, first.body, first.headers)).body).toEqual({ received: true, duplicate: false });
    const again = await post(url, second.body, second.headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: true, duplicate: true });
    expect((await post(url, first.body, first.headers)).body).toEqual({ received: true, duplicate: true });
    expect(inboxRows().length).toBe(before + 1);
  });

  it('answers 401 MISSING_SIGNATURE or INVALID_SIGNATURE in the service envelope, and stores nothing', async () => {
    const before = inboxRows().length;
    const body = JSON.stringify(sampleEvent('credits.depleted'));
    const missing = await post(url, body);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 'MISSING_SIGNATURE', message: expect.any(String) });
    const wrongSecret = await post(url, body, { 'x-service-signature': sign('not-the-secret', body) });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error.code).toBe('INVALID_SIGNATURE');
    const malformed = await post(url, body, { 'x-service-signature': 'sha256=xyz' });
    expect(malformed.body.error.code).toBe('INVALID_SIGNATURE');
    const tampered = await post(url, body.replace('0', '1'), { 'x-service-signature': sign(SECRET, body) });
    expect(tampered.status).toBe(401);
    expect(inboxRows().length).toBe(before);
  });

  it('answers 413 PAYLOAD_TOO_LARGE on Content-Length and while reading a chunked body', async () => {
    const big = Buffer.alloc(64 * 1024 + 1, 0x20);
    const declared = await post(url, big, { 'x-service-signature': sign(SECRET, big) });
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit_bytes: 65536 } });

    // No Content-Length: a streamed body is cut off once it passes the limit.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(8 * 1024).fill(0x20));
        controller.close();
      },
    });
    const response = await fetch(url, {
      method: 'POST',
      body: stream,
      headers: { 'x-service-signature': sign(SECRET, 'x') },
      duplex: 'half',
    });
    expect(response.status).toBe(413);
  });

  it('answers 400 to a signed body that is not an envelope, and keeps its raw bytes as a dead letter', async () => {
    for (const [file, code, verdict, message] of [
      // JSON.parse's words: Node 22 adds the line and column.
      ['invalid/not-json.txt', 'INVALID_JSON', 'invalid_json', /^Unterminated string in JSON at position 261( \(line 1 column 262\))?$/],
      [
        'invalid/not-an-envelope.json',
        'INVALID_ENVELOPE',
        'invalid_envelope',
        /^expected an object \{event, timestamp, data\}, received an array$/,
      ],
    ] as const) {
      const raw = readFileSync(join(FIXTURES, file));
      const answer = await post(url, raw, { 'x-service-signature': sign(SECRET, raw) });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe(code);
      // What is wrong, and where (the body as a whole): the same in the answer and in the stored reasons.
      expect(answer.body.error.details.issues).toEqual([{ path: '', message: expect.stringMatching(message) }]);
      const row = inboxRows().at(-1);
      // Kept under the SHA-256 of its bytes, in a column of its own: never taken for an event identity.
      expect(row).toMatchObject({ verdict, state: 'dead', identity: null, raw_sha256: createHash('sha256').update(raw).digest('hex') });
      expect(Buffer.compare(row.raw, raw)).toBe(0);
      expect(JSON.parse(row.reasons)).toEqual(answer.body.error.details.issues);
    }
  });

  it('acknowledges and keeps an unknown kind, invalid data and a bad timestamp (sorted out later)', async () => {
    for (const file of ['invalid/unknown-kind.json', 'invalid/invalid-data.json', 'invalid/bad-timestamp.json']) {
      const raw = readFileSync(join(FIXTURES, file));
      const answer = await post(url, raw, { 'x-service-signature': sign(SECRET, raw) });
      expect(answer.status, file).toBe(200);
      expect(answer.body).toEqual({ received: true, duplicate: false });
      expect(Buffer.compare(inboxRows().at(-1).raw, raw)).toBe(0);
    }
  });

  it('keeps working beside express.json() elsewhere in the app', async () => {
    const echoed = await post(`${server.url}/api/echo`, '{"hello":"monde"}');
    expect(echoed.body).toEqual({ hello: 'monde' });
  });

  it('answers 500 with how to mount it when a body parser ran first, and stores nothing', async () => {
    const before = inboxRows().length;
    const request = signedRequest(sampleEvent('candidate.sourced', { data: { phone: '+33700000001' } }), { secret: SECRET });
    const answer = await post(`${server.url}/parsed-first`, request.body, request.headers);
    expect(answer.status).toBe(500);
    expect(answer.body.error.code).toBe('BODY_ALREADY_READ');
    expect(answer.body.error.message).toMatch(/before any body parser/);
    expect(inboxRows().length).toBe(before);
  });

  it('accepts the exact bytes that express.raw() kept', async () => {
    const request = signedRequest(sampleEvent('candidate.sourced', { data: { phone: '+33700000002' } }), { secret: SECRET });
    const answer = await post(`${server.url}/raw-first`, request.body, request.headers);
    expect(answer.status).toBe(200);
    expect(Buffer.compare(inboxRows().at(-1).raw, request.body)).toBe(0);
  });

  it("takes the body's event as authoritative when the event header disagrees", async () => {
    const event = sampleEvent('campaign.status_changed', { data: { new_status: 'paused' } });
    const request = signedRequest(event, { secret: SECRET });
    request.headers['x-service-event'] = 'credits.low';
    const answer = await post(url, request.body, request.headers);
    expect(answer.status).toBe(200);
    expect(inboxRows().at(-1).kind).toBe('campaign.status_changed');
  });
});

describe('configuration', () => {
  it('refuses to start without a secret unless unsigned events are allowed explicitly', async () => {
    const tmp = tempDir();
    expect(() => createReceiver({ database: tmp.dbPath })).toThrow(/No webhook secret is configured/);
    const open = createReceiver({ database: tmp.dbPath, allowUnsigned: true });
    const result = await open.receive({ rawBody: Buffer.from(JSON.stringify(sampleEvent('credits.low'))), headers: {} });
    expect(result.answer.status).toBe(200);
    await open.close();
    tmp.cleanup();
  });

  it('opens no database when it refuses its options: nothing to close, no file made', () => {
    const tmp = tempDir();
    expect(() => createReceiver({ database: tmp.dbPath, heartbeat: false })).toThrow(/No webhook secret is configured/);
    expect(existsSync(tmp.dbPath)).toBe(false);
    expect(existsSync(`${tmp.dbPath}-wal`)).toBe(false);
    tmp.cleanup();
  });

  it('uses configured header names', async () => {
    const tmp = tempDir();
    const receiver = createReceiver({ database: tmp.dbPath, secret: SECRET, signatureHeader: 'X-Acme-Signature' });
    const body = Buffer.from(JSON.stringify(sampleEvent('credits.low')));
    const standard = await receiver.receive({ rawBody: body, headers: { 'x-service-signature': sign(SECRET, body) } });
    expect(standard.answer.status).toBe(401);
    const renamed = await receiver.receive({ rawBody: body, headers: { 'x-acme-signature': sign(SECRET, body) } });
    expect(renamed.answer.status).toBe(200);
    await receiver.close();
    tmp.cleanup();
  });
});
