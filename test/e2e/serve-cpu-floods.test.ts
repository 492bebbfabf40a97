// The real sender still gets through anonymous clients that spend serve's CPU rather than hold its
// resources: bodies in one-byte chunks, pipelined bad signatures, 1 MiB bodies signed wrong from
// 49 addresses (bench/lib/cpu-flood.ts, each in a thread of its own), against a real `serve` with
// its defaults, while the service's signed deliveries come from 127.0.0.1. Every delivery must be
// answered 2xx within 5 s, serve must answer its probes once the flood stops, and each defence is
// seen at work in what the flood was answered. An address alone, however busy it keeps serve, is
// never refused for its failures: it gets its exact 401s.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuFloodShapes, startCpuFlood, type CpuFloodStats } from '../../bench/lib/cpu-flood.js';
import { deliverFrom, SENDER_ADDRESS, type SentDelivery } from '../../bench/lib/flood.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe, type ServeProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_cpu_floods_e2e_2b7f41';
/** How long the sender keeps delivering while each flood runs. */
const DELIVERING_MS = 3000;

/** What each shape's flood must have been answered, showing its defence at work. */
const DEFENCES: Record<string, { name: string; check: (stats: CpuFloodStats) => void }> = {
  chunked: {
    name: 'its bodies refused 400 after a few pieces',
    check: (stats) => expect(stats.answers['400'] ?? 0).toBeGreaterThan(0),
  },
  pipelined: {
    // One answer a connection at most: what was pipelined behind a refusal is never answered.
    name: 'one answer a connection, the rest dropped unread',
    check: (stats) => expect((stats.answers['401'] ?? 0) + (stats.answers['429'] ?? 0)).toBeLessThanOrEqual(stats.opened),
  },
  large: {
    name: 'its addresses, over their budget of failures, refused 429',
    check: (stats) => expect(stats.answers['429'] ?? 0).toBeGreaterThan(0),
  },
};

describe('prequal-hooks serve: the real sender gets through floods that spend CPU', () => {
  const tmp = tempDir('prequal-hooks-cpu-floods-');
  let serve: ServeProcess;
  let n = 0;
  beforeAll(async () => {
    serve = await startServe(['--host', '127.0.0.1', '--port', '0', '--db', `${tmp.dir}/hooks.db`, '--secret', SECRET]);
  }, 30_000);
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    killChildren();
    tmp.cleanup();
  });

  it(
    'answers an address alone its exact 401s however busy it keeps serve: it is never refused for its failures',
    { timeout: 60_000 },
    async () => {
      // 1 MiB bodies signed wrong, back to back on eight connections, all from one address.
      const flood = startCpuFlood({ url: serve.webhookUrl, shape: 'large', connections: 8, from: ['127.0.0.20'] });
      try {
        await waitFor(() => ((flood.stats().answers['401'] ?? 0) >= 200 ? true : undefined), 30_000, 'two hundred answers');
      } finally {
        const stats = await flood.stop();
        expect(stats.answers['429'] ?? 0).toBe(0);
        expect(stats.answers['401']).toBeGreaterThanOrEqual(200);
      }
      // Then a dozen bad signatures from it, while serve still counts its loop as busy: a dozen exact 401s.
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const request = signedRequest(sampleEvent('candidate.added'), { secret: 'whsec_not_this_one' });
        statuses.push((await deliverFrom(serve.webhookUrl, request.body.toString(), request.headers, '127.0.0.20')).status);
      }
      expect(statuses).toEqual(Array.from({ length: 12 }, () => 401));
    },
  );

  for (const shape of cpuFloodShapes()) {
    const defence = DEFENCES[shape.flood.shape]!;
    it(
      `${shape.name}: every signed delivery answered 2xx within 5 s, serve answers at once after, ${defence.name}`,
      { timeout: 60_000 },
      async () => {
        // The flood gets going, and serve's loop gets busy, before the sender starts.
        const flood = startCpuFlood({ url: serve.webhookUrl, ...shape.flood });
        let stats: CpuFloodStats;
        try {
          await waitFor(() => (flood.stats().opened >= shape.flood.connections ? true : undefined), 20_000, 'the flood to open');
          // eslint-disable-next-line no-restricted-syntax -- the flood's first second, serve's loop busy: nothing outside serve shows it
          await delay(1000);
          const deliveries: Array<Promise<SentDelivery>> = [];
          // A fixed pace on purpose: the sender delivers five a second for as long as the flood is measured.
          // eslint-disable-next-line no-restricted-syntax -- the sender's pace, as above
          for (const ends = Date.now() + DELIVERING_MS; Date.now() < ends; await delay(200)) {
            const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `cand_cpu_${n++}` } }), {
              secret: SECRET,
            });
            deliveries.push(deliverFrom(serve.webhookUrl, request.body.toString(), request.headers, SENDER_ADDRESS));
          }
          const answered = await Promise.all(deliveries);
          console.log(
            `${shape.name}: ${answered.filter((d) => d.status === 200).length}/${answered.length} 2xx, slowest ${Math.round(Math.max(...answered.map((d) => d.ms)))} ms; flood ${JSON.stringify(flood.stats())}`,
          );
          expect(answered.map((d) => d.status)).toEqual(answered.map(() => 200));
          expect(Math.max(...answered.map((d) => d.ms))).toBeLessThan(5000);
        } finally {
          stats = await flood.stop();
        }
        defence.check(stats);
        const started = performance.now();
        const healthz = await fetch(`${serve.baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
        expect(healthz.status).toBe(200);
        expect(performance.now() - started).toBeLessThan(5000);
      },
    );
  }
});
