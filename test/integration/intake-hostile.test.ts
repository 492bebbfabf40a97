// Bodies an attacker with the secret (or a buggy sender) can sign: deep, odd keys, bad bytes.
// Each goes through the real adapters (node:http and Express over real sockets, fetch with a
// real Request), into a real SQLite file; the test process itself would die if one crashed.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/events/index.js';
import { createLogger } from '../../src/logging.js';
import { expressMiddleware } from '../../src/receive/express.js';
import { fetchHandler } from '../../src/receive/fetch.js';
import { createIntake } from '../../src/receive/intake.js';
import { nodeHandler } from '../../src/receive/node-http.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sign } from '../../src/signature.js';
import { listen, post, tempDir } from '../support/servers.js';
import { asStoreReads, received } from '../support/bodies.js';

const SECRET = 'whsec_hostile_5d0a';
const DEPTH = 100_000;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const signed = (body: Buffer | string) => {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return { raw, headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, raw) } };
};

function logSink() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info' }, sink) };
}

const added = (candidate: string, extra: string, envelopeExtra = '') =>
  `{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z"${envelopeExtra},"data":{"campaign_id":"cmp_deep","candidate_id":"${candidate}"${extra}}}`;

type Via = 'node:http' | 'express' | 'fetch';
interface Answer {
  status: number;
  contentType: string | null;
  body: any;
}

describe('hostile bodies through every adapter', () => {
  const tmp = tempDir();
  const { lines, logger } = logSink();
  const handled: WebhookEvent[] = [];
  let receiver: Receiver;
  let nodeServer: { url: string; close: () => Promise<void> };
  let expressServer: { url: string; close: () => Promise<void> };
  let handleFetch: (request: Request) => Promise<Response>;
  let reader: Database.Database;

  beforeAll(async () => {
    receiver = createReceiver({ database: tmp.dbPath, secret: SECRET, logger });
    receiver.onAny((event) => void handled.push(event));
    nodeServer = await listen(receiver.nodeHandler());
    const app = express();
    app.post('/webhooks', receiver.middleware());
    expressServer = await listen(app as never);
    handleFetch = receiver.fetchHandler();
    reader = new Database(tmp.dbPath, { readonly: true });
  });

  afterAll(async () => {
    reader.close();
    await nodeServer.close();
    await expressServer.close();
    await receiver.close();
    tmp.cleanup();
  });

  async function send(via: Via, body: Buffer | string): Promise<Answer> {
    const { raw, headers } = signed(body);
    if (via === 'fetch') {
      const response = await handleFetch(new Request('http://receiver.test/webhooks', { method: 'POST', headers, body: raw }));
      return { status: response.status, contentType: response.headers.get('content-type'), body: await response.json() };
    }
    const answer = await post(via === 'express' ? `${expressServer.url}/webhooks` : nodeServer.url, raw, headers);
    return { status: answer.status, contentType: answer.headers.get('content-type'), body: answer.body };
  }

  const row = (raw: Buffer | string) =>
    (reader.prepare('SELECT * FROM inbox').all() as Array<Record<string, any>>)
      .map(asStoreReads)
      .find((r) => (r.raw as Buffer).equals(Buffer.isBuffer(raw) ? raw : Buffer.from(raw)));

  const arrays = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
  const objects = `${'{"a":'.repeat(DEPTH)}null${'}'.repeat(DEPTH)}`;

  for (const via of ['node:http', 'express', 'fetch'] as const) {
    it(`${via}: answers every body nested ${DEPTH.toLocaleString('en')} levels, in the {error} envelope when refused`, async () => {
      const cases: Array<[string, string, number, string | null]> = [
        ['deep arrays in data', added(`${via}-arrays`, `,"deep":${arrays}`), 200, null],
        ['deep objects in data', added(`${via}-objects`, `,"deep":${objects}`), 200, null],
        ['deep envelope member', added(`${via}-member`, '', `,"meta":${arrays}`), 200, null],
        [
          'deep responses (invalid data)',
          `{"event":"candidate.interview.completed.extended","timestamp":"2026-11-20T10:00:00Z","data":{"campaign_id":"cmp_deep","candidate_id":"${via}-x","interview_score":5,"responses":${arrays}}}`,
          200,
          null,
        ],
        ['a deep body', `${arrays.slice(0, -1)},"${via}"]`, 400, 'INVALID_ENVELOPE'],
        [
          'deep data',
          `{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z","data":${'['.repeat(DEPTH)}"${via}"${']'.repeat(DEPTH)}}`,
          400,
          'INVALID_ENVELOPE',
        ],
        ['1e400 at the bottom', added(`${via}-inf`, `,"deep":${'['.repeat(DEPTH)}1e400${']'.repeat(DEPTH)}`), 400, 'INVALID_JSON'],
        [
          'a lone surrogate at the bottom',
          added(`${via}-lone`, `,"deep":${'{"a":'.repeat(DEPTH)}"\\udead"${'}'.repeat(DEPTH)}`),
          400,
          'INVALID_JSON',
        ],
      ];
      for (const [name, body, status, code] of cases) {
        const answer = await send(via, body);
        expect(answer.status, name).toBe(status);
        expect(answer.contentType, name).toMatch(/^application\/json/);
        if (code === null) expect(answer.body, name).toEqual({ received: true, duplicate: false });
        else {
          expect(answer.body.error, name).toMatchObject({ code, message: expect.any(String), details: { issues: [expect.anything()] } });
          // The path of a deep problem is cut short: answers and reasons stay small.
          expect(JSON.stringify(answer.body).length, name).toBeLessThan(2000);
        }
        const stored = row(body)!;
        expect(stored, name).toBeDefined();
        if (code === null) expect(stored.identity, name).toMatch(/^[0-9a-f]{64}$/);
        else expect(stored, name).toMatchObject({ identity: null, raw_sha256: sha256(Buffer.from(body)), state: 'dead' });
      }
      await receiver.drain();
      expect(row(cases[0]![1])!.state).toBe('projected');
      expect(row(cases[1]![1])!.state).toBe('projected');
      expect(row(cases[2]![1])!.state).toBe('projected');
      expect(row(cases[3]![1])!).toMatchObject({ state: 'dead', reasons: expect.stringContaining('data.responses') });
      const deep = handled.find((e) => (e.data as { candidate_id: string }).candidate_id === `${via}-arrays`);
      expect(Array.isArray((deep?.data as { deep?: unknown }).deep)).toBe(true);
      expect(reader.prepare('SELECT status FROM candidates WHERE candidate_id = ?').get(`${via}-objects`)).toEqual({ status: 'pending' });
    });
  }

  it('keeps a retried bad body as one dead letter, and different bad bytes as two', async () => {
    const notJson = '{"event":"candidate.added","timestamp":';
    const ff = Buffer.from([...Buffer.from(added('bytes', ',"note":"')), 0xff, ...Buffer.from('"}}')]);
    const fe = Buffer.from([...Buffer.from(added('bytes', ',"note":"')), 0xfe, ...Buffer.from('"}}')]);
    const infinite = added('inf-again', ',"x":1e400');
    const nullish = added('inf-again', ',"x":null');
    for (const body of [notJson, ff, fe, infinite]) {
      // The sender retries 4xx answers: every try gets the same 400, one row keeps the bytes.
      for (let attempt = 0; attempt < 4; attempt++) {
        const answer = await send(attempt % 2 === 0 ? 'node:http' : 'fetch', body);
        expect(answer.status).toBe(400);
        expect(answer.body.error.code).toBe('INVALID_JSON');
      }
      const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
      const rows = reader.prepare('SELECT * FROM inbox WHERE raw_sha256 = ?').all(sha256(raw)) as Array<Record<string, any>>;
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ identity: null, verdict: 'invalid_json', state: 'dead' });
      expect(Buffer.compare(received(rows[0] as { raw: Buffer; codec: number | null }), raw)).toBe(0);
    }
    expect(JSON.parse(row(ff)!.reasons)[0].message).toMatch(/not UTF-8: byte 0xFF/);
    expect(JSON.parse(row(fe)!.reasons)[0].message).toMatch(/not UTF-8: byte 0xFE/);
    expect(JSON.parse(row(infinite)!.reasons)[0]).toMatchObject({ path: 'data.x', message: expect.stringContaining('double range') });
    // The real null is an event of its own, not a duplicate of the 1e400 body.
    expect(await send('express', nullish)).toMatchObject({ status: 200, body: { received: true, duplicate: false } });
  });

  it('keeps events that differ only inside __proto__ apart, and hands the key to handlers', async () => {
    const first = added('proto', ',"__proto__":{"admin":true},"constructor":"c"');
    const second = added('proto', ',"__proto__":{"admin":false},"constructor":"c"');
    const reordered = `{ "data": { "constructor":"c", "__proto__": { "admin": true }, "candidate_id":"proto", "campaign_id":"cmp_deep" }, "timestamp":"2026-11-20T10:00:00Z", "event":"candidate.added" }`;
    expect((await send('node:http', first)).body).toEqual({ received: true, duplicate: false });
    expect((await send('express', second)).body).toEqual({ received: true, duplicate: false });
    expect((await send('fetch', reordered)).body).toEqual({ received: true, duplicate: true });
    expect(row(first)!.identity).not.toBe(row(second)!.identity);
    await receiver.drain();
    const seen = handled.filter((e) => (e.data as { candidate_id: string }).candidate_id === 'proto');
    expect(seen.map((e) => Object.getOwnPropertyDescriptor(e.data, '__proto__')?.value)).toEqual([{ admin: true }, { admin: false }]);
    expect(seen.every((e) => Object.getPrototypeOf(e.data) === Object.prototype && e.data.constructor === ('c' as never))).toBe(true);
  });

  it('never logs a body', () => {
    const text = lines.join('');
    expect(text).not.toContain('[[[[');
    expect(text).not.toContain('admin');
  });
});

describe('last-resort guards', () => {
  function throwingIntake(logger = logSink().logger) {
    const intake = createIntake({ secrets: [SECRET], store: async () => ({ ok: true, inboxId: 1, duplicate: false }), logger });
    // An exception no stage expects, as the recursive identity threw on deep bodies.
    return {
      ...intake,
      receive: async () => Promise.reject(new RangeError('Maximum call stack size exceeded near "candidate@example.test"')),
    };
  }

  it('the intake core answers 500 in the envelope, and logs the type of error, not its message or the body', async () => {
    const { lines, logger } = logSink();
    const intake = createIntake({
      secrets: [SECRET],
      logger,
      store: () => {
        throw new TypeError('cannot store {"first_name":"Éloïse"}');
      },
    });
    const { raw, headers } = signed(added('guard', ',"first_name":"Éloïse"'));
    const result = await intake.receive({ rawBody: raw, headers });
    expect(result).toMatchObject({
      outcome: 'failed',
      answer: { status: 500, body: { error: { code: 'INTERNAL_ERROR', details: { cause: 'TypeError' } } } },
    });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 50,
      stage: 'intake',
      error: 'TypeError',
      msg: expect.stringContaining('unexpected error'),
    });
    expect(lines[0]).not.toContain('Éloïse');
  });

  it('node:http: an exception is answered 500 in the envelope (the handler never rejects)', async () => {
    const handler = nodeHandler(throwingIntake());
    const server = await listen((req, res) => {
      void handler(req, res).catch(() => res.destroy());
    });
    const answer = await post(server.url, '{}', {});
    await server.close();
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ error: { code: 'INTERNAL_ERROR', details: { cause: 'RangeError' } } });
  });

  it('Express: an exception is answered 500 in the envelope, not as an HTML stack trace', async () => {
    const { lines, logger } = logSink();
    const app = express();
    app.post('/webhooks', expressMiddleware(throwingIntake(logger) as never));
    const server = await listen(app as never);
    const answer = await post(`${server.url}/webhooks`, '{}', {});
    await server.close();
    expect(answer.status).toBe(500);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });
    expect(JSON.parse(lines[0]!)).toMatchObject({
      stage: 'express',
      error: 'RangeError',
      at: expect.arrayContaining([expect.stringMatching(/^at /)]),
    });
    expect(lines.join('')).not.toContain('example.test'); // the message may quote the body: never logged
  });

  it('fetch: an exception (here, a body stream that fails) resolves to a 500 in the envelope', async () => {
    const { lines, logger } = logSink();
    const intake = createIntake({ secrets: [SECRET], store: async () => ({ ok: true, inboxId: 1, duplicate: false }), logger });
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('connection reset'));
      },
    });
    const request = new Request('http://receiver.test/webhooks', { method: 'POST', body: failing, duplex: 'half' });
    const response = await fetchHandler(intake)(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });
    expect(JSON.parse(lines[0]!)).toMatchObject({ stage: 'fetch' });
    expect(
      await fetchHandler(throwingIntake() as never)(new Request('http://receiver.test/webhooks', { method: 'POST', body: '{}' })),
    ).toMatchObject({ status: 500 });
  });

  it('a listener that throws after the answer is logged; the request was answered', async () => {
    const { lines, logger } = logSink();
    const intake = createIntake({ secrets: [SECRET], store: async () => ({ ok: true, inboxId: 1, duplicate: false }), logger });
    const handler = nodeHandler(intake, () => {
      throw new Error('listener bug');
    });
    const server = await listen((req, res) => {
      void handler(req, res).catch(() => lines.push('rejected'));
    });
    const { raw, headers } = signed(added('listener', ''));
    const answer = await post(server.url, raw, headers);
    await server.close();
    expect(answer.status).toBe(200);
    expect(lines.join('')).not.toContain('rejected');
    expect(JSON.parse(lines[0]!)).toMatchObject({ stage: 'onRequest listener', error: 'Error' });
  });
});
