// The budget of request bodies held before verification, through the real adapters (node:http
// and Express over real sockets, fetch with real Requests): past it new bodies get 503 BUSY at
// once, unread; every byte claimed comes back however the request ends; and bodies read into
// the large (resizable) buffers reach the inbox byte for byte, on every engine.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging.js';
import { createBodyBudget } from '../../src/receive/budget.js';
import type { StoreOutcome } from '../../src/receive/delivery.js';
import { expressMiddleware } from '../../src/receive/express.js';
import { fetchHandler } from '../../src/receive/fetch.js';
import { ConfigurationError } from '../../src/errors.js';
import { createIntake, type Intake } from '../../src/receive/intake.js';
import { nodeHandler } from '../../src/receive/node-http.js';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sign } from '../../src/signature.js';
import { answerClientErrors } from '../../src/standalone/client-errors.js';
import { refusalSummary } from '../../src/standalone/refusals.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { ENGINES } from '../support/engines.js';
import { listen, post } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_budget_2b7e91';
const LIMIT = 100_000;
const quiet = createLogger({ level: 'silent' });

/** A connection that announces a body (`declared` bytes, or chunked), sends `sent` bytes of it and holds. */
function holdBody(
  url: string,
  declared: number | 'chunked',
  sent: number,
  options: { allowHalfOpen?: boolean; from?: string } = {},
): { socket: Socket; answer: Promise<string>; received: () => string } {
  const { hostname, port, pathname } = new URL(url);
  const socket = connect({
    host: hostname,
    port: Number(port),
    allowHalfOpen: options.allowHalfOpen ?? false,
    ...(options.from !== undefined && { localAddress: options.from }),
  });
  const length = declared === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`;
  socket.write(
    `POST ${pathname === '/' ? '/webhooks' : pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${length}\r\nX-Service-Signature: sha256=${'0'.repeat(64)}\r\n\r\n`,
  );
  if (sent > 0) socket.write(declared === 'chunked' ? `${sent.toString(16)}\r\n${' '.repeat(sent)}\r\n` : ' '.repeat(sent));
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return { socket, answer: new Promise((resolve) => socket.on('close', () => resolve(text))), received: () => text };
}

const signedSmall = (n: number) =>
  signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `cand_budget_${n}` } }), { secret: SECRET });

describe('the budget of bodies held, through node:http and Express', () => {
  let receiver: Receiver;
  const servers: Array<{ url: string; close: () => Promise<void> }> = [];
  const held = async () => (await receiver.metrics().getSingleMetric('prequal_hooks_buffered_request_bytes')!.get()).values[0]!.value;

  beforeAll(async () => {
    // Two bodies at the limit fill it. Nobody is slow here (a slow rate of 0): what gives way is
    // decided by the addresses alone, whatever this machine's pace.
    receiver = createReceiver({
      database: ':memory:',
      secret: SECRET,
      maxBodyBytes: LIMIT,
      maxBufferedBytes: 2 * LIMIT,
      bodyRates: { slowBytesPerSecond: 0 },
      logger: quiet,
    });
    servers.push(await listen(receiver.nodeHandler()));
    const app = express();
    app.post('/webhooks', receiver.middleware());
    servers.push(await listen(app as never));
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await receiver.close();
  });

  for (const [via, index] of [
    ['node:http', 0],
    ['express', 1],
  ] as const) {
    it(`${via}: claims only what came, whatever was announced; from one address, answers 503 BUSY once what came fills the budget`, async () => {
      const url = `${servers[index]!.url}/webhooks`;
      // Thirty connections announcing a body at the limit and sending 10 bytes hold 300 bytes, not 30 limits.
      const announced = Array.from({ length: 30 }, () => holdBody(url, LIMIT, 10));
      await waitFor(async () => (await held()) === 300, 5000, 'the thirty bodies to be held');
      const small = signedSmall(1);
      expect((await post(url, small.body, small.headers)).status).toBe(200);
      for (const body of announced) body.socket.destroy();
      await waitFor(async () => (await held()) === 0, 5000, 'every byte to come back');

      const first = holdBody(url, LIMIT, LIMIT - 1);
      const second = holdBody(url, 'chunked', LIMIT - 5000);
      await waitFor(async () => (await held()) === 2 * LIMIT - 5001, 5000, 'the two bodies to be held');
      // A small signed delivery still fits beside them; a body that grows past the room left does not.
      const fits = signedSmall(2);
      expect((await post(url, fits.body, fits.headers)).status).toBe(200);
      const started = performance.now();
      const refused = holdBody(url, LIMIT, 10_000);
      const text = await refused.answer;
      expect(performance.now() - started).toBeLessThan(1000);
      expect(text).toMatch(/^HTTP\/1\.1 503 /);
      expect(text).toMatch(/\r\nRetry-After: 5\r\n/i);
      expect(text).toMatch(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
        error: { code: 'BUSY', message: expect.stringMatching(/not read/), details: { buffered_limit_bytes: 2 * LIMIT } },
      });
      first.socket.destroy();
      second.socket.destroy();
      await waitFor(async () => (await held()) === 0, 5000, 'every byte to come back');
      const after = signedSmall(3);
      expect((await post(url, after.body, after.headers)).status).toBe(200);
    });

    it(`${via}: another address holding the budget gives way to a delivery from an address that holds nothing`, async () => {
      const url = `${servers[index]!.url}/webhooks`;
      const flood = [holdBody(url, LIMIT, LIMIT - 1, { from: '127.0.0.2' }), holdBody(url, LIMIT, LIMIT - 1, { from: '127.0.0.2' })];
      await waitFor(async () => (await held()) === 2 * LIMIT - 2, 5000, 'the flood to fill the budget');
      const { hostname, port } = new URL(url);
      const small = signedSmall(4);
      const body = small.body.toString();
      // Its body in two pieces: the first does not complete it, so it cannot use the reserve kept
      // for bodies that arrive whole, and needs room the flood holds.
      const socket = connect({ host: hostname, port: Number(port), localAddress: '127.0.0.3' });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      const answered = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(
        `POST /webhooks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${Object.entries(small.headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`,
      );
      // One of the flood's bodies is cut off to make room, told 503, and its connection closed.
      const cut = await Promise.race([Promise.any(flood.map((f) => f.answer)), delay(5000).then(() => 'none')]);
      expect(cut).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"BUSY"/);
      socket.end(body.slice(20));
      await answered;
      expect(text.slice(0, 12)).toBe('HTTP/1.1 200');
      const cuts = await receiver.metrics().getSingleMetric('prequal_hooks_bodies_cut_total')!.get();
      expect(cuts.values.find((v) => v.labels.reason === 'evicted')?.value).toBeGreaterThanOrEqual(1);
      for (const f of flood) f.socket.destroy();
      await waitFor(async () => (await held()) === 0, 5000, 'every byte to come back');
    });
  }
});

type Adapter = 'node:http' | 'express' | 'fetch';

/** An intake on a store that does as told, served by one adapter. */
async function served(
  adapter: Adapter,
  store: () => Promise<StoreOutcome>,
): Promise<{
  intake: Intake;
  send: (body: Uint8Array | ReadableStream<Uint8Array>, headers?: Record<string, string>) => Promise<number>;
  url: string;
  close: () => Promise<void>;
}> {
  const intake = createIntake({ secrets: [SECRET], maxBodyBytes: LIMIT, budget: createBodyBudget(4 * LIMIT), store, logger: quiet });
  if (adapter === 'fetch') {
    const handle = fetchHandler(intake);
    const send = async (body: Uint8Array | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
      (await handle(new Request('http://receiver.test/webhooks', { method: 'POST', headers, body, duplex: 'half' }))).status;
    return { intake, send, url: '', close: async () => undefined };
  }
  const handler = adapter === 'node:http' ? nodeHandler(intake) : express().post('/webhooks', expressMiddleware(intake));
  const server = await listen(handler as never);
  const url = `${server.url}/webhooks`;
  const send = async (body: Uint8Array | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
    (await fetch(url, { method: 'POST', headers, body, duplex: 'half' }).catch(() => ({ status: 0 }))).status;
  return { intake, send, url, close: server.close };
}

describe('every byte claimed comes back, however a request ends', () => {
  const stored: () => Promise<StoreOutcome> = async () => ({ ok: true, inboxId: 1, duplicate: false });
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  for (const adapter of ['node:http', 'express', 'fetch'] as const) {
    it(`${adapter}: stored, refused by signature, too large (announced and read), storage down, the intake throwing, a body too big for the room left`, async () => {
      let outcome: () => Promise<StoreOutcome> = stored;
      const { intake, send, close } = await served(adapter, () => outcome());
      closing.push(close);
      const good = signedSmall(3);
      const large = randomBytes(LIMIT - 10);
      const cases: Array<[string, () => Promise<number>, number]> = [
        ['stored', () => send(good.body, good.headers), 200],
        ['a large body kept as a dead letter', () => send(large, { 'x-service-signature': sign(SECRET, large) }), 400],
        ['a bogus signature', () => send(large, { 'x-service-signature': `sha256=${'0'.repeat(64)}` }), 401],
        ['too large, announced', () => send(randomBytes(LIMIT + 1)), 413],
        ['too large, found while reading', () => send(streamOf([randomBytes(LIMIT / 2), randomBytes(LIMIT / 2), randomBytes(10)])), 413],
        [
          'storage down',
          () => ((outcome = async () => ({ ok: false, code: 'SQLITE_BUSY', message: 'locked' })), send(good.body, good.headers)),
          503,
        ],
        ['the store throwing', () => ((outcome = async () => Promise.reject(new RangeError('boom'))), send(good.body, good.headers)), 500],
      ];
      for (const [name, run, status] of cases) {
        expect(await run(), name).toBe(status);
        await waitFor(() => intake.budget.held() === 0, 5000, `${name}: the budget to be empty`);
      }
      // A body of unknown length that grows past the room left: 503 BUSY, and its claim comes back too.
      // The room is held by a body being answered, which is never cut off to make room.
      const other = intake.budget.claim();
      expect(other.take(4 * LIMIT - LIMIT / 2)).toBe(true);
      other.complete();
      expect(await send(streamOf([randomBytes(LIMIT / 4), randomBytes(LIMIT / 2)]))).toBe(503);
      expect(intake.budget.held()).toBe(4 * LIMIT - LIMIT / 2);
      other.release();
      expect(intake.budget.held()).toBe(0);
    });
  }

  for (const adapter of ['node:http', 'express'] as const) {
    it(`${adapter}: a client that goes away mid-body gives its bytes back`, async () => {
      const { intake, url, close } = await served(adapter, stored);
      closing.push(close);
      for (const declared of [LIMIT, 'chunked'] as const) {
        const sender = holdBody(url, declared, 70_000);
        await waitFor(() => intake.budget.held() >= 70_000, 5000, 'the body to be held');
        sender.socket.destroy();
        await waitFor(() => intake.budget.held() === 0, 5000, 'the bytes to come back');
        expect(intake.budget.held()).toBe(0);
      }
    });
  }

  it('fetch: a body stream that fails gives its bytes back (500 in the envelope)', async () => {
    const { intake, send } = await served('fetch', stored);
    let pulls = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ < 3) controller.enqueue(randomBytes(30_000));
        else controller.error(new Error('connection reset'));
      },
    });
    expect(await send(failing)).toBe(500);
    expect(intake.budget.held()).toBe(0);
  });

  it('node:http: a sender cut off by the request timeout gives its bytes back, even holding its half of the connection open', async () => {
    const intake = createIntake({ secrets: [SECRET], maxBodyBytes: LIMIT, store: stored, logger: quiet });
    const handler = nodeHandler(intake);
    // The handler answers every request itself and its promise never rejects.
    const server = createServer({ requestTimeout: 1000, connectionsCheckingInterval: 100 }, (req, res) => void handler(req, res));
    server.on('clientError', answerClientErrors(quiet, refusalSummary(quiet)));
    const { url, close } = await listen(server);
    closing.push(close);
    const sender = holdBody(`${url}/webhooks`, LIMIT, 1000, { allowHalfOpen: true });
    // It keeps writing after the 408: its request must not stay alive, holding its claim.
    const dribble = setInterval(() => sender.socket.writable && sender.socket.write(' '), 100);
    try {
      await waitFor(() => intake.budget.held() >= 1000, 5000, 'the body to be held');
      // Not awaiting the close: this sender never closes its half.
      await waitFor(() => /^HTTP\/1\.1 408 /.test(sender.received()), 5000, 'the 408');
      await waitFor(() => intake.budget.held() === 0, 5000, 'the bytes to come back after the 408');
      expect(sender.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(intake.budget.held()).toBe(0);
    } finally {
      clearInterval(dribble);
      sender.socket.destroy();
    }
  });
});

describe.each(ENGINES)('large bodies, read into resizable buffers, stored byte for byte on $name', (engine) => {
  let receiver: Receiver;
  let cleanup: () => void;
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    const fresh = await engine.fresh();
    cleanup = fresh.cleanup;
    receiver = createReceiver({ database: fresh.database, secret: SECRET, logger: quiet });
    await receiver.ready();
    server = await listen(receiver.nodeHandler());
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
    cleanup();
  });

  it('through node:http and fetch, announced and chunked, in chunks of every size', async () => {
    const sizes = [64 * 1024 + 1, 300_000, 1024 * 1024];
    const sent: Buffer[] = [];
    for (const size of sizes) {
      for (const via of ['node:http announced', 'node:http chunked', 'fetch announced', 'fetch chunked'] as const) {
        const body = randomBytes(size);
        const chunked = via.endsWith('chunked');
        const headers = { 'x-service-signature': sign(SECRET, body), ...(!chunked && { 'content-length': String(size) }) };
        const payload = chunked ? streamOf(split(body)) : body;
        const status = via.startsWith('fetch')
          ? (
              await receiver.fetchHandler()(
                new Request('http://receiver.test/webhooks', { method: 'POST', headers, body: payload, duplex: 'half' }),
              )
            ).status
          : (await fetch(server.url, { method: 'POST', headers, body: payload, duplex: 'half' })).status;
        // Random bytes are not JSON: each is kept whole as a dead letter.
        expect(status, `${via}, ${size} bytes`).toBe(400);
        sent.push(body);
      }
    }
    const store = storePorts(await receiver.store());
    const rows = await store.setAside(0, 100);
    expect(rows.map((row) => Buffer.from(row.raw).toString('base64'))).toEqual(sent.map((body) => body.toString('base64')));
  });
});

describe('the budget option', () => {
  it('is refused smaller than the body limit: a body at the limit could never be read', () => {
    expect(() => createReceiver({ database: ':memory:', secret: SECRET, maxBodyBytes: 2048, maxBufferedBytes: 1024 })).toThrow(
      ConfigurationError,
    );
    expect(() => createReceiver({ database: ':memory:', secret: SECRET, maxBufferedBytes: 1024 })).toThrow(
      /no smaller than the body limit \(1048576\)/,
    );
  });
});

/** Pieces of irregular sizes, 1 byte to 70 KiB. */
function split(body: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0, i = 0; at < body.length; i++) {
    const size = [1, 7, 16_384, 70_000, 1000][i % 5]!;
    pieces.push(body.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(pieces[i++]!);
      else controller.close();
    },
  });
}
