// Requests that spend the receiver's CPU rather than hold its bytes, through the real node:http and
// Express adapters over raw sockets: a body in one-byte chunks is refused early (and the rest of
// what was read is not handed to JavaScript a piece at a time, while the connection's parser, which
// Node reuses, reads the next connection's body whole); a refused request closes its connection
// and what was pipelined behind it is dropped unread; a real sender's chunked body and pipelined
// signed requests are taken as before.
import { connect } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../src/receiver/create-receiver.js';
import { sign } from '../../src/signature.js';
import { listen, tempDir } from '../support/servers.js';

const SECRET = 'whsec_cpu_6a1e0d';

/** Writes `bytes` on a new connection and reads everything until the server closes it (or `ms` pass). */
async function exchange(url: string, bytes: string | Buffer, ms = 5000): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return await new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, ms);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.write(bytes);
  });
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));

function event(candidate: string): string {
  return JSON.stringify({
    event: 'candidate.added',
    timestamp: '2026-11-20T10:00:00Z',
    data: { campaign_id: 'cmp_cpu', candidate_id: candidate, name: 'x'.repeat(3000) },
  });
}

/** A whole request: Content-Length, or chunked in `pieces` pieces; signed with `secret`. */
function request(body: string, options: { secret?: string; pieces?: number; close?: boolean } = {}): string {
  const signature = sign(options.secret ?? SECRET, body);
  const head = `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Service-Signature: ${signature}\r\n${options.close === true ? 'Connection: close\r\n' : ''}`;
  if (options.pieces === undefined) return `${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const size = Math.ceil(body.length / options.pieces);
  let chunks = '';
  for (let at = 0; at < body.length; at += size) {
    const piece = body.slice(at, at + size);
    chunks += `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`;
  }
  return `${head}Transfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`;
}

describe('requests that spend CPU, through node:http and Express', () => {
  const tmp = tempDir();
  let receiver: Receiver;
  const servers: Record<'node:http' | 'express', { url: string; close: () => Promise<void> }> = {} as never;

  beforeAll(async () => {
    receiver = createReceiver({ database: tmp.dbPath, secret: SECRET });
    servers['node:http'] = await listen(receiver.nodeHandler());
    const app = express();
    app.post('/webhooks', receiver.middleware());
    servers.express = await listen(app as never);
  });

  afterAll(async () => {
    await servers['node:http'].close();
    await servers.express.close();
    await receiver.close();
    tmp.cleanup();
  });

  /** 1 when the candidate's event was stored (and projected), else 0. */
  const stored = async (candidate: string) => {
    await receiver.drain();
    return (await receiver.query.getCandidate(candidate)) === undefined ? 0 : 1;
  };

  for (const via of ['node:http', 'express'] as const) {
    it(`${via}: refuses a body in one-byte chunks with 400 BODY_TOO_FRAGMENTED and closes; the next connection's chunked body is read whole`, async () => {
      const url = `${servers[via].url}/webhooks`;
      const body = event(`cand_frag_${via}`);
      const signature = sign(SECRET, body);
      // Signed right, so that only its framing can refuse it; 3 KiB in chunks of one byte.
      const pieces = [...body].map((c) => `1\r\n${c}\r\n`).join('');
      const { text, closed } = await exchange(
        url,
        `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-Service-Signature: ${signature}\r\nTransfer-Encoding: chunked\r\n\r\n${pieces}0\r\n\r\n`,
      );
      expect(closed).toBe(true);
      expect(statuses(text)).toEqual([400]);
      expect(text).toMatch(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: { code: 'BODY_TOO_FRAGMENTED', details: { free_pieces: 64, min_piece_bytes: 256 } },
      });
      expect(await stored(`cand_frag_${via}`)).toBe(0);
      // Node hands the freed parser to the next connection: it must read bodies again.
      const next = event(`cand_after_frag_${via}`);
      const after = await exchange(url, request(next, { pieces: 3, close: true }));
      expect(statuses(after.text)).toEqual([200]);
      expect(await stored(`cand_after_frag_${via}`)).toBe(1);
    });

    it(`${via}: takes a real sender's chunked body, in a few pieces or in pieces of half a kilobyte`, async () => {
      const url = `${servers[via].url}/webhooks`;
      for (const pieces of [2, 7]) {
        const body = event(`cand_chunks_${pieces}_${via}`);
        expect(statuses((await exchange(url, request(body, { pieces, close: true }))).text)).toEqual([200]);
      }
      // 300-byte chunks of a 30 KiB body, each written on its own.
      const body = JSON.stringify({ ...JSON.parse(event(`cand_small_chunks_${via}`)), padding: 'p'.repeat(27_000) });
      expect(statuses((await exchange(url, request(body, { pieces: Math.ceil(body.length / 300), close: true }))).text)).toEqual([200]);
      expect(await stored(`cand_small_chunks_${via}`)).toBe(1);
    });

    it(`${via}: answers a bad signature with Connection: close and drops, unread, what was pipelined behind it`, async () => {
      const url = `${servers[via].url}/webhooks`;
      const pipelined =
        request(event(`cand_bad_${via}`), { secret: 'whsec_not_ours' }) +
        request(event(`cand_behind_1_${via}`)) +
        request(event(`cand_behind_2_${via}`));
      const { text, closed } = await exchange(url, pipelined);
      expect(closed).toBe(true);
      expect(statuses(text)).toEqual([401]);
      expect(text).toMatch(/\r\nConnection: close\r\n/i);
      expect((await stored(`cand_behind_1_${via}`)) + (await stored(`cand_behind_2_${via}`))).toBe(0);
    });

    it(`${via}: answers signed requests pipelined on one connection in order, and keeps it open`, async () => {
      const url = `${servers[via].url}/webhooks`;
      const { text, closed } = await exchange(
        url,
        request(event(`cand_pipe_1_${via}`)) + request(event(`cand_pipe_2_${via}`)) + request(event(`cand_pipe_3_${via}`), { close: true }),
      );
      expect(closed).toBe(true);
      expect(statuses(text)).toEqual([200, 200, 200]);
      expect(text.match(/Connection: close/gi)).toHaveLength(1);
      for (const n of [1, 2, 3]) expect(await stored(`cand_pipe_${n}_${via}`)).toBe(1);
    });
  }
});
