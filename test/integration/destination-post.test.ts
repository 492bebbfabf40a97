// One POST of a change (src/destinations/delivery.ts) against real servers on loopback: what a
// receiver is sent (signed headers, Basic authorization from the URL's user info, the body), and
// how each kind of answer is told: a 2xx, a redirect not followed, 410, Retry-After on 429, no
// answer within the timeout, a refused connection, a stop; and keep-alive: one connection for
// requests one after another.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { postChange } from '../../src/destinations/delivery.js';
import { generateSecret } from '../../src/destinations/signing.js';
import { listen } from '../support/servers.js';

const secret = generateSecret();
const message = { id: 'msg_1', timestamp: 1_764_300_000, body: JSON.stringify({ seq: 1, entity: 'candidate', id: 'c1' }) };
const now = () => Date.parse('2026-11-28T00:00:00Z');

describe('postChange', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
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
  const post = (url: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
    postChange({ url, secrets: [secret] }, message, { signal: options.signal ?? new AbortController().signal, now, ...options });

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
    expect(await post(`${silent.url}/hook`, { timeoutMs: 100 })).toMatchObject({ ok: false, status: null, error: 'no answer within 15 s' });
    const refused = await listen(() => undefined);
    await refused.close();
    expect(await post(`${refused.url}/hook`)).toMatchObject({ ok: false, status: null, error: 'ECONNREFUSED' });
    const stop = new AbortController();
    const pending = post(`${silent.url}/hook`, { signal: stop.signal });
    stop.abort();
    expect(await pending).toMatchObject({ ok: false, status: null, error: 'stopped' });
  });
});
