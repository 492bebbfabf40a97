// Live feed clients that stop reading (docs/changes.md, "Live: server-sent events") against the
// real `serve`: streams of clients that never read a byte, over changes with large rows, hold
// no more than their bound in serve (it reads nothing more for them from the database) and are
// cut once they have left it unread for the stall timeout, each cut a line naming the account;
// meanwhile the sender's webhooks are answered at once, and the places the streams took are free
// again after.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe, type ServeProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_serve_feed_stalls_2c8e';
const FEED = 'feed-token-stalls-7d41a9e0';
/** As many as serve streams at once. */
const STREAMS = 64;
/** Changes of about 500 kB each, 24 MB in all: far more than a socket's buffers take for a client that does not read. */
const CHANGES = 48;
const ROW_TEXT = 500_000;
/** What serve may grow by while they stall: about 3 MB a stream measured (the bound, a change, a page), and room. */
const GROWTH_MB = 400;

/** Resident memory of a process, and its peak since it started (kB in /proc, here MB). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** A client that asks for the stream and never reads a byte of it. */
function stalledClient(serve: ServeProcess): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(serve.baseUrl).port) }, () => {
      socket.pause();
      socket.write(`GET /changes HTTP/1.1\r\nHost: feed\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${FEED}\r\n\r\n`);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

describe.skipIf(process.platform !== 'linux')('serve with live feed clients that stop reading', () => {
  const tmp = tempDir('prequal-hooks-stalls-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('cuts them after the stall timeout, holding their bound and no more meanwhile, and answers the sender at once', async () => {
    const serve = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'stalls.db'),
      '--secret',
      SECRET,
      '--feed-token',
      FEED,
      '--feed-stall-timeout',
      '2s',
    ]);
    const pid = serve.child.pid!;
    const post = async (event: object) => {
      const request = signedRequest(JSON.stringify(event), { secret: SECRET });
      const started = performance.now();
      const answer = await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body });
      expect(answer.status).toBe(200);
      return performance.now() - started;
    };
    const long = 'Expérience du chargement de semi-remorques à cadence soutenue. '.repeat(ROW_TEXT / 64);
    for (let i = 0; i < CHANGES; i += 1)
      await post(sampleEvent('candidate.interview.completed', { data: { candidate_id: `cand-large-${i}`, strengths: long } }));
    const feedPage = async () =>
      (await (await fetch(`${serve.baseUrl}/changes?limit=1000`, { headers: { Authorization: `Bearer ${FEED}` } })).json()) as {
        changes: unknown[];
        next: number;
      };
    const last = await waitFor(
      async () => {
        const page = await feedPage();
        return page.changes.length > CHANGES ? page.next : undefined;
      },
      10_000,
      'the large changes recorded',
    );
    const before = memory(pid);

    const clients = await Promise.all(Array.from({ length: STREAMS }, () => stalledClient(serve)));
    // The sender keeps posting while the streams fill up and stall: each answer is timed.
    const answers: number[] = [];
    const cuts = () =>
      serve.logLines().filter((line) => String(line.msg).startsWith('GET /changes: closed a live stream of account "default"'));
    // Until every stream is cut, or serve has grown past what the bound allows (then asserted below).
    await waitFor(
      async () => {
        answers.push(await post(sampleEvent('candidate.added', { data: { candidate_id: `cand-during-${answers.length}` } })));
        return cuts().length === STREAMS || memory(pid).peak - before.rss >= GROWTH_MB ? true : undefined;
      },
      20_000,
      `the ${STREAMS} streams cut`,
      { everyMs: 100 },
    );
    const during = memory(pid);
    // Without the bound, each stream held the changes it had read ahead, all 24 MB of them, and
    // serve grew by gigabytes; with it, a few MB a stream.
    expect(during.peak - before.rss, `peak ${Math.round(during.peak)} MB, ${Math.round(before.rss)} MB before`).toBeLessThan(GROWTH_MB);
    expect(cuts()).toHaveLength(STREAMS);

    for (const line of cuts()) {
      expect(line).toMatchObject({ level: 40, account: 'default' });
      // Each held its bound of 1 MiB at most, and one change more, when it was cut.
      expect(line.unread as number).toBeLessThan(1024 * 1024 + 2 * ROW_TEXT);
      // None read past what its client could not take: far from the end of the feed.
      expect(line.after as number).toBeLessThan(last);
    }
    expect(serve.stdout()).not.toContain(FEED);
    expect(Math.max(...answers), `the sender's answers: ${answers.map(Math.round).join(', ')} ms`).toBeLessThan(2000);

    // A cut client sees its connection end, and the places are free for new streams.
    await Promise.all(
      clients.map(
        (socket) =>
          new Promise<void>((resolve) => {
            socket.on('error', () => undefined);
            socket.once('close', () => resolve());
            socket.resume();
          }),
      ),
    );
    const again = await fetch(`${serve.baseUrl}/changes`, {
      headers: { Authorization: `Bearer ${FEED}`, Accept: 'text/event-stream', 'Last-Event-ID': String(last) },
    });
    expect(again.status).toBe(200);
    await again.body!.cancel();
    expect(await serve.stop('SIGTERM')).toBe(0);
  });
});
