// The real sender always gets through: a real `serve` with its default limits, flooded by
// anonymous clients in each of the ways that used to keep it out (bodies announced large and
// trickled; bodies sent whole but their last byte, over the budget; header lines trickled over the
// connection cap; at the default path and at an account's), from one address or spread over
// eight 127.x addresses, while the service's signed deliveries come from 127.0.0.1 (and, for two
// shapes, from the flood's own address). Every delivery must be answered 2xx within 5 s; refused
// requests are counted in summary lines, at most one a second per reason.
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverFrom, fairnessShapes, SENDER_ADDRESS, startFlood, type SentDelivery } from '../../bench/lib/flood.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, runCliProcess, startServe, type ServeProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_fairness_e2e_7c1d09a3';
const ACCOUNT_SECRET = 'whsec_fairness_account_41e0b7';
/** How long the sender keeps delivering while each flood holds. */
const DELIVERING_MS = 3000;
/**
 * How long a flood runs before the sender starts: past its first second, when every holder is
 * still in its grace (from the flood's own address, a newcomer may then find nobody to replace).
 */
const STEADY_MS = 2000;

describe('prequal-hooks serve: the real sender gets through anonymous floods', () => {
  const tmp = tempDir('prequal-hooks-fairness-');
  let serve: ServeProcess;
  let accountUrl: string;
  let n = 0;
  beforeAll(async () => {
    const db = join(tmp.dir, 'hooks.db');
    const added = await runCliProcess(['accounts', 'add', '--db', db, '--account', 'north', '--secret', ACCOUNT_SECRET, '--json']);
    expect(added.code).toBe(0);
    const { webhookPath } = JSON.parse(added.stdout) as { webhookPath: string };
    serve = await startServe(['--host', '127.0.0.1', '--port', '0', '--db', db, '--secret', SECRET]);
    accountUrl = `${serve.baseUrl}${webhookPath}`;
  }, 30_000);
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    killChildren();
    tmp.cleanup();
  });

  for (const shape of fairnessShapes()) {
    it(`${shape.name}: every signed delivery answered 2xx within 5 s`, { timeout: 60_000 }, async () => {
      const url = shape.account === true ? accountUrl : serve.webhookUrl;
      const secret = shape.account === true ? ACCOUNT_SECRET : SECRET;
      const flood = startFlood({ url, ...shape.flood });
      const started = Date.now();
      try {
        // The flood holds what it can before the sender starts: every slot opened once, and in its steady state.
        await waitFor(
          () => (flood.stats().opened >= shape.flood.connections && Date.now() - started >= STEADY_MS ? true : undefined),
          20_000,
          'the flood to open',
        );
        const deliveries: Array<Promise<SentDelivery>> = [];
        // A fixed pause on purpose: the sender delivers at its own pace (four a second) for as long
        // as the flood is measured; the pace is the scenario, not a wait for something to happen.
        // eslint-disable-next-line no-restricted-syntax -- the sender's pace, as above
        for (const ends = Date.now() + DELIVERING_MS; Date.now() < ends; await delay(250)) {
          const request = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: `cand_fair_${n++}` } }), { secret });
          deliveries.push(deliverFrom(url, request.body.toString(), request.headers, SENDER_ADDRESS));
        }
        const answered = await Promise.all(deliveries);
        const stats = flood.stats();
        console.log(
          `${shape.name}: ${answered.filter((d) => d.status === 200).length}/${answered.length} 2xx, slowest ${Math.round(Math.max(...answered.map((d) => d.ms)))} ms; flood ${stats.opened} connections, answers ${JSON.stringify(stats.answers)}`,
        );
        expect(answered.map((d) => d.status)).toEqual(answered.map(() => 200));
        expect(Math.max(...answered.map((d) => d.ms))).toBeLessThan(5000);
      } finally {
        flood.stop();
      }
    });
  }

  it('logs refused requests as summary lines, at most one a second per reason, with counts and top addresses', () => {
    const summaries = serve.logLines().filter((line) => line.outcome === 'refused' && typeof line.reason === 'string');
    expect(summaries.length).toBeGreaterThan(0);
    const perSecond = new Map<string, number>();
    for (const line of summaries) {
      const key = `${String(line.reason)}@${Math.floor(Number(line.time) / 1000)}`;
      perSecond.set(key, (perSecond.get(key) ?? 0) + 1);
      expect(line).toMatchObject({ count: expect.any(Number), clients: expect.any(Array) });
    }
    // One line per reason per second (a timer's second may straddle two clock seconds).
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(2);
    // No line per refused request: far fewer lines than refusals.
    const refusals = summaries.reduce((sum, line) => sum + Number(line.count), 0);
    expect(summaries.length).toBeLessThan(refusals / 5);
  });
});
