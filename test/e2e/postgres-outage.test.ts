// PostgreSQL stopped and started again under load: 503s in time while it is away, readiness false,
// then full recovery without a restart of the receiver, and nothing acknowledged lost.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIdentity } from '../../src/events/index.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe } from '../support/cli-process.js';
import { needs } from '../support/needs.js';
import { findBinaries, POSTGRES_INSTALL, startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { waitFor } from '../support/wait-for.js';
import { identityText } from '../../src/store/identities.js';

const SECRET = 'whsec_outage_8d2f';
const hasBinaries = needs('PostgreSQL', (await findBinaries()) !== undefined, {
  install: POSTGRES_INSTALL,
  untested: 'the outage under load',
});

describe.skipIf(!hasBinaries)('when PostgreSQL goes away under load and comes back', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    // Its own server: this test stops it, which the others must not see.
    server = await startPostgres();
  });
  afterAll(async () => {
    killChildren();
    await server.stop();
  });

  it('answers 503 with Retry-After within 5 s, reports not ready, and recovers without a restart', async () => {
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', server.url, '--secret', SECRET, '--log-level', 'error']);
    const acknowledged = new Set<string>();
    const refused: Array<{ ms: number; retryAfter: string | null; code: string }> = [];
    let stop = false;
    let n = 0;
    const sender = async () => {
      while (!stop) {
        const event = sampleEvent('candidate.added', { data: { candidate_id: `o-${n++}` } });
        const request = signedRequest(event, { secret: SECRET });
        const started = performance.now();
        const response = await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body });
        const body = (await response.json()) as { error?: { code: string } };
        if (response.status === 200) acknowledged.add(eventIdentity(event));
        else
          refused.push({
            ms: performance.now() - started,
            retryAfter: response.headers.get('retry-after'),
            code: body.error?.code ?? String(response.status),
          });
        // eslint-disable-next-line no-restricted-syntax -- the senders' pace (a hundred a second each) is the scenario
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const senders = [sender(), sender(), sender()];
    const readiness = async () => (await fetch(`${serve.baseUrl}/readyz`)).status;

    await waitFor(() => acknowledged.size >= 30, 15_000, 'thirty acknowledgements', { everyMs: 10 });
    expect(await readiness()).toBe(200);
    await server.pause();
    const whileDown = acknowledged.size;
    // Down until serve says so: not ready, and deliveries refused (each within the sender's 5 s).
    await waitFor(async () => (await readiness()) === 503 && refused.length > 0, 15_000, 'not ready and a delivery refused');
    await server.restart();

    // Back: acknowledgements resume, and readiness with them, without restarting serve.
    try {
      await waitFor(() => acknowledged.size >= whileDown + 30, 15_000, 'thirty more acknowledgements once back', { everyMs: 20 });
    } finally {
      stop = true;
      await Promise.all(senders);
    }
    expect(acknowledged.size).toBeGreaterThanOrEqual(whileDown + 30);
    expect(await readiness()).toBe(200);

    for (const r of refused) {
      expect(r.code).toBe('STORAGE_UNAVAILABLE');
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(r.ms).toBeLessThan(5000);
    }

    // Nothing acknowledged is missing, and everything stored gets projected.
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const stored = new Set(
      (await client.query<{ identity: Buffer }>('SELECT identity FROM inbox')).rows.map((r) => identityText(r.identity)),
    );
    expect([...acknowledged].filter((identity) => !stored.has(identity))).toEqual([]);
    await waitFor(
      async () => (await client.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM inbox WHERE state = 'pending'")).rows[0]!.n === 0,
      10_000,
      'every stored event projected',
      { everyMs: 100 },
    );
    await client.end();
    expect(await serve.stop('SIGTERM')).toBe(0);
  }, 60_000);
});
