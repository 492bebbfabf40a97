// The real `prequal-hooks serve` under an anonymous flood: 600 connections, each announcing a body
// just under the 1 MiB limit with a bogus signature, sending it slowly and holding it unfinished,
// and connecting again when cut off. Such a flood once took the process from 86 MB to 680 MB
// (and it kept them); now the bodies it buffers are bounded, its own signed deliveries keep
// being answered within the sender's 5 s, and the memory comes back once the flood ends.
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryOf, startFlood } from '../../bench/lib/flood.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe, type ServeProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_flood_e2e_5d21c9a0';
const METRICS_TOKEN = 'metrics-token-flood-e2e-93f1';
const FLOOD_MS = 12_000;

interface Delivery {
  status: number;
  ms: number;
  retryAfter: string | null;
  body: { received?: boolean; error?: { code: string; message: string; details?: unknown } };
}

/** One signed delivery from the service, timed as the service times it (it waits 5 s). */
async function deliver(url: string, n: number): Promise<Delivery> {
  const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `cand_flood_${n}` } }), { secret: SECRET });
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body, signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as Delivery['body'];
  return { status: response.status, ms: performance.now() - started, retryAfter: response.headers.get('retry-after'), body };
}

async function bufferedBytes(serve: ServeProcess): Promise<number> {
  const text = await (await fetch(`${serve.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  return Number(/^prequal_hooks_buffered_request_bytes (\S+)$/m.exec(text)?.[1]);
}

describe('prequal-hooks serve under an anonymous flood of slow bodies', () => {
  const tmp = tempDir('prequal-hooks-flood-');
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    killChildren();
    tmp.cleanup();
  });

  it('holds under 250 MB, answers its own deliveries within 5 s, and gives the memory back', { timeout: 60_000 }, async () => {
    serve = await startServe([
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--db',
      join(tmp.dir, 'hooks.db'),
      '--secret',
      SECRET,
      '--metrics-token',
      METRICS_TOKEN,
    ]);
    const pid = serve.child.pid!;
    expect((await deliver(serve.webhookUrl, 0)).status).toBe(200);
    const before = memoryOf(pid).rssMb;

    const flood = startFlood({
      url: serve.webhookUrl,
      connections: 600,
      bodyBytes: 1024 * 1024 - 1024,
      chunkBytes: 16 * 1024,
      tickMs: 100,
      reconnectMs: 250,
    });
    const deliveries: Array<Promise<Delivery>> = [];
    for (let n = 1, ends = Date.now() + FLOOD_MS; Date.now() < ends; n++) {
      deliveries.push(deliver(serve.webhookUrl, n));
      // A fixed pause on purpose: the service's own sender delivers at its pace (two a second)
      // all through the flood; the pace is the scenario, not a wait for something to happen.
      // eslint-disable-next-line no-restricted-syntax -- the sender's pace, as above
      await delay(500);
    }
    const answered = await Promise.all(deliveries);
    const stats = flood.stop();
    const peak = memoryOf(pid).peakMb;
    // The bodies held are handed back at once, not left to a garbage collection that an idle
    // process may never run: wait for that, not for a fixed time.
    const after = await waitFor(
      () => {
        const rssMb = memoryOf(pid).rssMb;
        return rssMb < peak - 50 && rssMb;
      },
      10_000,
      `an RSS under ${Math.round(peak - 50)} MB, 50 under the peak`,
      { everyMs: 250 },
    );
    console.log(
      `flood: RSS ${Math.round(before)} MB before, ${Math.round(peak)} MB at the peak, ${Math.round(after)} MB after; ${stats.opened} connections, answers ${JSON.stringify(stats.answers)}`,
    );

    expect(peak).toBeLessThan(250);
    expect(after).toBeLessThan(peak - 50);
    // The flood was refused at once (503 BUSY), not read: most of its connections got an answer.
    expect(stats.answers['503']).toBeGreaterThan(600);
    for (const delivery of answered) {
      expect(delivery.ms).toBeLessThan(5000);
      if (delivery.status === 503)
        expect(delivery).toMatchObject({ retryAfter: expect.any(String), body: { error: { code: 'BUSY', message: expect.any(String) } } });
      else expect(delivery).toMatchObject({ status: 200, body: { received: true } });
    }
    // Nothing is left held: the budget comes back to zero, and a delivery is stored at once.
    await waitFor(async () => ((await bufferedBytes(serve!)) === 0 ? true : undefined), 5000, 'the budget to be empty');
    expect(await deliver(serve.webhookUrl, 10_000)).toMatchObject({ status: 200, body: { received: true } });
  });

  it('at --max-connections, takes a new connection and closes the one that has delivered least for longest, and says so in a summary line', async () => {
    const capped = await startServe([
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--db',
      join(tmp.dir, 'capped.db'),
      '--secret',
      SECRET,
      '--max-connections',
      '3',
    ]);
    const { port } = new URL(capped.baseUrl);
    const open = (): Promise<Socket> =>
      new Promise((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
        socket.on('error', () => undefined);
      });
    // Three connections that have not finished their headers hold the three places.
    const holders = await Promise.all([open(), open(), open()]);
    const answers = holders.map(() => '');
    const closed = holders.map(
      (socket, i) =>
        new Promise<boolean>((resolve) => {
          socket.on('data', (chunk: Buffer) => (answers[i] += chunk.toString()));
          socket.on('close', () => resolve(true));
        }),
    );
    for (const socket of holders) socket.write('POST /webhooks HTTP/1.1\r\nHost: x\r\n');
    // Within their first second they are not slow yet: a newcomer may be closed unanswered (the
    // sender retries). Past it, the newcomer takes the place of a holder.
    const delivered = await waitFor(
      async () => {
        const delivery = await deliver(capped.webhookUrl, 20_000).catch(() => undefined);
        return delivery?.status === 200 ? delivery : undefined;
      },
      5000,
      'a delivery to take the place of a holder',
    );
    expect(delivered).toMatchObject({ status: 200, body: { received: true } });
    expect(await Promise.race([Promise.any(closed), delay(2000).then(() => false)])).toBe(true);
    // Closed before its headers were whole: told so in the envelope, not cut off unanswered.
    expect(answers.find((text) => text !== '')).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"BUSY"/);
    const evictions = () => capped.logLines().filter((line) => line.outcome === 'refused' && line.reason === 'connection_evicted');
    const summary = await waitFor(async () => evictions()[0], 3000, 'the summary line');
    expect(summary).toMatchObject({ count: expect.any(Number), clients: [{ client: '127.0.0.1', count: expect.any(Number) }] });
    for (const socket of holders) socket.destroy();
    expect(await capped.stop()).toBe(0);
  });
});
