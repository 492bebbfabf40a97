// One POST of a change (src/destinations/delivery.ts) against real servers on loopback: what a
// receiver is sent (signed headers, Basic authorization from the URL's user info, the body), and
// how each kind of answer is told: a 2xx, a redirect not followed, 410, Retry-After on 429, no
// answer within the timeout, a refused connection, a stop; keep-alive: one connection for
// requests one after another; and the work an answer may cost bounded: 64 KiB of its body read at
// most, the deadline over its head and body together, 16 connections to a destination at most.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { destinationConnections, MAX_ANSWER_BYTES, postChange, type DestinationConnections } from '../../src/destinations/delivery.js';
import { generateSecret } from '../../src/destinations/signing.js';
import { networkPolicy } from '../../src/destinations/network-policy.js';
import { listen } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const secret = generateSecret();
const message = { id: 'msg_1', timestamp: 1_764_300_000, body: JSON.stringify({ seq: 1, entity: 'candidate', id: 'c1' }) };
const now = () => Date.parse('2026-11-28T00:00:00Z');

describe('postChange', () => {
  const closing: Array<() => Promise<void>> = [];
  let connections: DestinationConnections;
  afterEach(async () => {
    connections?.close();
    for (const close of closing.splice(0)) await close();
  });
  const server = async (answer: (req: IncomingMessage, res: ServerResponse, body: string) => void) => {
    const seen: Array<{ headers: IncomingMessage['headers']; body: string; port: number | undefined }> = [];
    const started = await listen(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ headers: req.headers, body, port: req.socket.remotePort });
      answer(req, res, body);
    });
    closing.push(started.close);
    return { ...started, seen };
  };
  const post = (url: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}) => {
    connections ??= destinationConnections(networkPolicy());
    return postChange({ url, secrets: [secret] }, message, {
      signal: options.signal ?? new AbortController().signal,
      connections,
      now,
      ...options,
    });
  };

  it('sends the body signed, with Basic authorization from the user info, on one kept-alive connection', async () => {
    const target = await server((_req, res) => res.writeHead(204).end());
    const withUser = target.url.replace('http://', 'http://hooks:p%40ss@');
    expect(await post(`${withUser}/hook`)).toEqual({ ok: true, status: 204 });
    expect(await post(`${withUser}/hook`)).toEqual({ ok: true, status: 204 });
    const [first, second] = target.seen;
    expect(first!.body).toBe(message.body);
    expect(first!.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(message.timestamp),
      authorization: `Basic ${Buffer.from('hooks:p@ss').toString('base64')}`,
    });
    expect(first!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(second!.port).toBe(first!.port);
  });

  it('never follows a redirect, disables on 410, and honours Retry-After on 429', async () => {
    const target = await server((req, res) => {
      if (req.url === '/moved') res.writeHead(302, { location: '/elsewhere' }).end();
      else if (req.url === '/gone') res.writeHead(410).end('gone');
      else res.writeHead(429, { 'retry-after': '120' }).end();
    });
    expect(await post(`${target.url}/moved`)).toMatchObject({
      ok: false,
      status: 302,
      gone: false,
      error: expect.stringMatching(/redirect/),
    });
    expect(target.seen.map((s) => s.body)).toHaveLength(1); // /elsewhere was never asked
    expect(await post(`${target.url}/gone`)).toMatchObject({ ok: false, status: 410, gone: true });
    expect(await post(`${target.url}/busy`)).toMatchObject({ ok: false, status: 429, retryAfterMs: 120_000 });
  });

  it('fails on no answer within the timeout, on a refused connection, and when stopped', async () => {
    const silent = await server(() => undefined);
    expect(await post(`${silent.url}/hook`, { timeoutMs: 100 })).toMatchObject({
      ok: false,
      status: null,
      error: 'no answer within 0.1 s',
    });
    const refused = await listen(() => undefined);
    await refused.close();
    expect(await post(`${refused.url}/hook`)).toMatchObject({ ok: false, status: null, error: 'ECONNREFUSED' });
    const stop = new AbortController();
    const pending = post(`${silent.url}/hook`, { signal: stop.signal });
    stop.abort();
    expect(await pending).toMatchObject({ ok: false, status: null, error: 'stopped' });
  });

  /** A receiver that answers 200 at once, then sends a body for ever, `piece` bytes every `everyMs` (0: as fast as it is read). */
  const endless = async (piece: number, everyMs: number) => {
    const sockets = new Set<Socket>();
    let open = 0;
    let mostOpen = 0;
    let written = 0;
    let closedAt: number | undefined;
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(piece, 120);
      const more = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
          if (everyMs > 0) return void setTimeout(more, everyMs);
        }
      };
      more();
    });
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      mostOpen = Math.max(mostOpen, ++open);
      socket.on('close', () => {
        open--;
        closedAt = Date.now();
        sockets.delete(socket);
      });
    });
    const started = await listen(server);
    closing.push(started.close);
    return {
      url: started.url,
      open: () => open,
      mostOpen: () => mostOpen,
      written: () => written,
      closedAt: () => closedAt,
    };
  };

  it('reads at most 64 KiB of a body that never ends, then closes its connection: the status stands', async () => {
    const forever = await endless(16 * 1024, 0);
    const started = Date.now();
    expect(await post(`${forever.url}/hook`)).toEqual({ ok: true, status: 200 });
    await waitFor(() => forever.open() === 0, 2000, 'the connection closed');
    expect(forever.closedAt()! - started).toBeLessThan(2000);
    // What the server could write before it was closed: the 64 KiB read, and what the sockets' buffers held.
    expect(forever.written()).toBeLessThan(MAX_ANSWER_BYTES + 32 * 1024 * 1024);
  });

  it('is out until the body of its answer ends, and a body that trickles ends at the deadline of the head and body together', async () => {
    const trickle = await endless(10, 20);
    const started = Date.now();
    expect(await post(`${trickle.url}/hook`, { timeoutMs: 500 })).toEqual({ ok: true, status: 200 });
    // Out meanwhile: its place among the destination's 16 is not given to another request before.
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    await waitFor(() => trickle.open() === 0, 2000, 'the connection closed');
    expect(trickle.closedAt()! - started).toBeLessThan(1500);
  });

  it('opens 16 connections to a destination at most, whatever its answers hold up', async () => {
    const forever = await endless(16 * 1024, 0);
    const answers = await Promise.all(Array.from({ length: 40 }, () => post(`${forever.url}/hook`)));
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(forever.mostOpen()).toBeLessThanOrEqual(16);
  });
});
