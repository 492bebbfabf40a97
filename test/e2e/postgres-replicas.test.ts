// Several receivers, one PostgreSQL database: deliveries sprayed across real processes, one of
// them killed mid-stream, and the projected state compared with SQLite's for the same events.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { eventIdentity, type WebhookEvent } from '../../src/events/index.js';
import { replayInto } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, SHUFFLED, startScript, startServe, type ServeProcess } from '../support/cli-process.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { tempDir } from '../support/servers.js';
import { readStoreTables } from '../support/tables.js';
import { waitFor } from '../support/wait-for.js';
import { identityText } from '../../src/store/identities.js';

const SECRET = 'whsec_replicas_5c1e';
const APP = fileURLToPath(new URL('../support/handler-app.mjs', import.meta.url));
const hasPostgres = postgresUrl() !== '';

/** A seeded shuffle, so that a failure can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Events of 40 candidates over several campaigns, with late and same-instant ones, plus the lifecycle. */
function events(): WebhookEvent[] {
  const lifecycle = readFileSync(SHUFFLED, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as WebhookEvent);
  const made: WebhookEvent[] = [];
  const kinds = ['candidate.added', 'candidate.interview.started', 'candidate.interview.failed', 'candidate.interview.completed'] as const;
  for (let c = 0; c < 40; c++) {
    kinds.forEach((kind, k) => {
      made.push(
        sampleEvent(kind, {
          timestamp: new Date(Date.UTC(2026, 10, 20, 9) + c * 60_000 + k * 1000 * (c % 3 === 0 ? 0 : 1)).toISOString(),
          data: { candidate_id: `r-${c}`, campaign_id: `cmp_r${c % 4}`, interview_score: (c % 11) * 0.9 },
        }),
      );
    });
  }
  return [...lifecycle, ...made];
}

/** The bodies a sender would post: every event, some twice, some re-serialised (other key order and spacing). */
function deliveries(all: WebhookEvent[], seed: number): string[] {
  const bodies = all.map((e) => JSON.stringify(e));
  all.forEach((e, i) => {
    if (i % 5 === 0)
      bodies.push(JSON.stringify({ data: e.data, timestamp: e.timestamp, event: e.event }, null, i % 2 === 0 ? 2 : undefined));
    if (i % 7 === 0) bodies.push(JSON.stringify(e));
  });
  return shuffled(bodies, seed);
}

/** Posts a body like the service does, to one receiver and then the next on failure, until a 2xx. */
async function deliver(body: string, receivers: () => ServeProcess[], start: number): Promise<void> {
  const request = signedRequest(body, { secret: SECRET });
  for (let attempt = 0; attempt < 200; attempt++) {
    const list = receivers();
    const target = list[(start + attempt) % list.length]!;
    try {
      const response = await fetch(target.webhookUrl, { method: 'POST', headers: request.headers, body: request.body });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // cut off (the process was killed): the sender tries again
    }
    // eslint-disable-next-line no-restricted-syntax -- the sender's pause before it tries again is part of the scenario
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('a delivery was never acknowledged');
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

async function sqliteTablesOf(bodies: string[]) {
  const tmp = tempDir();
  const store = await openStore(tmp.dbPath);
  try {
    await replayInto(
      { store },
      bodies.map((b) => JSON.parse(b) as object),
    );
    return await readStoreTables(tmp.dbPath);
  } finally {
    await store.close();
    tmp.cleanup();
  }
}

describe.skipIf(!hasPostgres)('three receivers sharing one PostgreSQL database', () => {
  afterAll(() => killChildren());

  it('lose nothing acknowledged when one is killed mid-stream, and project what SQLite projects', async () => {
    const url = await createDatabase(postgresUrl(), `replicas_${randomBytes(4).toString('hex')}`);
    const args = ['--port', '0', '--host', '127.0.0.1', '--db', url, '--secret', SECRET, '--log-level', 'warn'];
    const receivers = await Promise.all([startServe(args), startServe(args), startServe(args)]);
    const bodies = deliveries(events(), 7);

    let next = 0;
    let killedAt = -1;
    const worker = async (w: number) => {
      for (let i = next++; i < bodies.length; i = next++) {
        if (i === Math.floor(bodies.length * 0.4) && killedAt < 0) {
          killedAt = i;
          // SIGKILL one receiver in the middle of the stream, and start another in its place.
          expect(await receivers[1].stop('SIGKILL')).toBe(null);
          receivers[1] = await startServe(args);
        }
        await deliver(bodies[i]!, () => receivers, w + i);
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, w) => worker(w)));
    expect(killedAt).toBeGreaterThan(0);

    // Every distinct event is stored once, and all of them end projected.
    const distinct = new Set(bodies.map((b) => eventIdentity(JSON.parse(b))));
    const counts = await waitFor(
      async () => {
        const byState = await query<{ state: string; n: number }>(url, 'SELECT state, COUNT(*)::int AS n FROM inbox GROUP BY state');
        return !byState.some((c) => c.state === 'pending') && byState;
      },
      20_000,
      'every stored event projected',
      { everyMs: 100 },
    );
    expect(counts).toEqual([{ state: 'projected', n: distinct.size }]);
    const stored = await query<{ identity: Buffer }>(url, 'SELECT identity FROM inbox');
    expect(new Set(stored.map((r) => identityText(r.identity)))).toEqual(distinct);

    const postgresTables = await readStoreTables(url);
    expect(postgresTables).toEqual(await sqliteTablesOf(bodies));
    for (const r of receivers) expect(await r.stop('SIGTERM')).toBe(0);
  }, 120_000);

  it('run every handler at least once, one call at a time per candidate in arrival order, when one process dies', async () => {
    const url = await createDatabase(postgresUrl(), `handlers_${randomBytes(4).toString('hex')}`);
    await query(url, 'CREATE TABLE handler_calls (seq bigserial PRIMARY KEY, candidate_id text, identity text, inbox_id bigint, pid int)');
    const apps = await Promise.all([0, 1, 2].map(() => startScript(APP, [url, SECRET])));

    // Each candidate's events are sent one after the other (arrival order), candidates interleaved.
    const perCandidate = Array.from({ length: 12 }, (_, c) =>
      (['candidate.added', 'candidate.interview.started', 'candidate.interview.completed', 'candidate.interview.failed'] as const).map(
        (kind, k) =>
          JSON.stringify(
            sampleEvent(kind, { timestamp: new Date(Date.UTC(2026, 10, 21) - k * 1000).toISOString(), data: { candidate_id: `h-${c}` } }),
          ),
      ),
    );
    let killed = false;
    await Promise.all(
      perCandidate.map(async (bodies, c) => {
        for (const [k, body] of bodies.entries()) {
          if (c === 5 && k === 2 && !killed) {
            killed = true;
            await apps[0]!.stop('SIGKILL');
            apps[0] = await startScript(APP, [url, SECRET]);
          }
          await deliver(body, () => apps, c + k);
        }
      }),
    );

    const all = perCandidate.flat();
    await waitFor(
      async () => {
        const [due] = await query<{ n: number }>(url, "SELECT COUNT(*)::int AS n FROM inbox WHERE handlers_pending OR state = 'pending'");
        return due!.n === 0;
      },
      30_000,
      'every event projected and its handlers run',
      { everyMs: 100 },
    );
    const calls = await query<{ candidate_id: string; identity: string; inbox_id: number; pid: number }>(
      url,
      'SELECT candidate_id, identity, inbox_id::int, pid FROM handler_calls ORDER BY seq',
    );
    // At least once: every event's handler ran.
    expect(new Set(calls.map((c) => c.identity))).toEqual(new Set(all.map((b) => eventIdentity(JSON.parse(b)))));
    expect(new Set(calls.map((c) => c.pid)).size).toBeGreaterThan(1);
    // In order per candidate: first calls follow the inbox (arrival) order, whatever the timestamps.
    for (let c = 0; c < perCandidate.length; c++) {
      const firsts: number[] = [];
      for (const call of calls.filter((x) => x.candidate_id === `h-${c}`)) if (!firsts.includes(call.inbox_id)) firsts.push(call.inbox_id);
      expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
      expect(firsts).toHaveLength(4);
    }
    for (const app of apps) expect(await app.stop('SIGTERM')).toBe(0);
  }, 120_000);
});
