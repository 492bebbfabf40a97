// Destinations on both engines, as a receiver sees them: a real HTTP server on loopback that
// verifies each Standard Webhooks signature, fed by the delivery loop from changes the projection
// records (events replayed through the same path as HTTP). Order per entity, retries after 500s,
// dead deliveries and retry, the breaker, 410, Retry-After, erasure through a filter, one process
// at a time per destination, and secrets sealed at rest.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDeliveryLoop, type DeliveryLoop } from '../../src/destinations/delivery-loop.js';
import { openDestinations, type AddDestination, type Destinations } from '../../src/destinations/registry.js';
import { openAccounts } from '../../src/accounts/index.js';
import { generateSecret } from '../../src/destinations/signing.js';
import { createLogger } from '../../src/logging.js';
import { eraseCandidate } from '../../src/privacy/erase.js';
import { replayInto } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/samples.js';
import { runCli } from '../support/command-io.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { listen, tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { sqlOn } from '../support/sql.js';
import { destinationsOf } from '../../src/destinations/sql.js';
import { candidateAdded, project } from '../support/destination-events.js';

interface Received {
  id: string;
  timestamp: number;
  body: { seq: number; entity: string; id: string; op: string; row: Record<string, unknown> | null; account: string };
  at: number;
  status: number;
}

/** A receiver that checks every signature against `secret` and answers what `answer` says. */
async function receiver(secret: () => string) {
  const received: Received[] = [];
  const verified: boolean[] = [];
  let answer: (body: Received['body'], attempt: number) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 });
  const attempts = new Map<string, number>();
  const server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const id = String(req.headers['webhook-id']);
    const timestamp = Number(req.headers['webhook-timestamp']);
    const key = Buffer.from(secret().slice('whsec_'.length), 'base64');
    const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.${raw}`).digest('base64'));
    const ok = String(req.headers['webhook-signature'])
      .split(' ')
      .some((s) => {
        const given = Buffer.from(s.replace(/^v1,/, ''));
        return given.length === expected.length && timingSafeEqual(given, expected);
      });
    verified.push(ok);
    const body = JSON.parse(raw) as Received['body'];
    const attempt = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, attempt);
    const { status, headers } = answer(body, attempt);
    received.push({ id, timestamp, body, at: Date.now(), status });
    res.writeHead(status, headers).end();
  });
  return {
    url: server.url,
    received,
    verified,
    answer: (next: typeof answer) => (answer = next),
    close: server.close,
  };
}

const logger = createLogger({ level: 'silent' });

/** Each event projected in a batch of its own: a batch records one change per row it moves. */
function interviewCompleted(candidateId: string, minute: number, score: number) {
  return sampleEvent('candidate.interview.completed', {
    timestamp: `2026-11-09T08:${String(minute).padStart(2, '0')}:00.000Z`,
    data: { candidate_id: candidateId, campaign_id: 'cmp_1', interview_score: score },
  });
}

describe.each(ENGINES)('destinations on $name', (engine) => {
  let store: Store;
  let database: string;
  let close: () => Promise<void>;
  let destinations: Destinations;
  let loops: DeliveryLoop[];
  let tmp: ReturnType<typeof tempDir>;
  let secret: string;
  let target: Awaited<ReturnType<typeof receiver>>;
  let accountsKeyFile: string;

  beforeEach(async () => {
    ({ store, database, close } = await freshStore(engine));
    tmp = tempDir();
    const keyFile = join(tmp.dir, 'accounts-key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    destinations = openDestinations(store, { keyFile });
    accountsKeyFile = keyFile;
    loops = [];
    target = await receiver(() => secret);
  });

  afterEach(async () => {
    await Promise.all(loops.map((loop) => loop.stop(1000)));
    await target.close();
    await close();
    tmp.cleanup();
  });

  const add = async (request: Partial<AddDestination> = {}) => {
    // Candidates only: a candidate's first event also records its campaign, which would interleave the seqs.
    const added = await destinations.add({ account: 'default', url: `${target.url}/hook`, filter: { entity: 'candidate' }, ...request });
    secret = request.secret ?? added.secret!;
    return added;
  };
  const start = (options: { pauseAfter?: number; pollMs?: number; intakeBusy?: () => boolean } = {}) => {
    const loop = startDeliveryLoop({ store, destinations, logger, pollMs: 20, ...options });
    loops.push(loop);
    return loop;
  };
  const delivered = () => target.received.filter((r, i) => target.verified[i] === true && r.status === 200);
  const stateOf = async (destination: string) => (await destinationsOf(store).get({ account: 'default', destination }))!;

  it('seals the URL and the secret, masks the password, and starts after the changes already recorded', async () => {
    await replayInto({ store }, [candidateAdded('before', 1)]);
    const added = await add({ url: `http://hook:Pa55-in-url@127.0.0.1:1/x`, secret: 'whsec_' + randomBytes(24).toString('base64') });
    expect(added.url).toBe('http://***@127.0.0.1:1/x');
    const row = await stateOf(added.destination);
    expect(JSON.stringify(row)).not.toContain('Pa55-in-url');
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(row.cursor).toBe((await store.changesAfter(0, 10)).last);
    expect(row.cursor).toBeGreaterThan(0);
    expect(destinations.open(row)).toEqual({ url: 'http://hook:Pa55-in-url@127.0.0.1:1/x', secrets: [secret] });
    expect((await destinations.list('default')).map((d) => [d.destination, d.lag, d.queued, d.dead])).toEqual([
      [added.destination, 0, 0, 0],
    ]);
  });

  it('delivers each change signed, in order per entity, retrying after 500s with the same webhook-id', async () => {
    const added = await add({ schedule: [0, 50, 100, 200] });
    // The first change of candidate A fails twice: its second change waits; B is not held back.
    target.answer((body, attempt) => ({ status: body.id === 'a' && body.row?.interview_score == null && attempt <= 2 ? 500 : 200 }));
    start();
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2), interviewCompleted('a', 3, 8)]);
    await waitFor(() => new Set(delivered().map((r) => r.id)).size >= 3 && target.received.length >= 5, 10_000, 'three changes delivered');
    expect(target.verified.every(Boolean)).toBe(true);
    const a = target.received.filter((r) => r.body.id === 'a');
    const [first, second] = [a[0]!.body.seq, a[3]!.body.seq];
    expect(a.map((r) => r.body.seq)).toEqual([first, first, first, second]);
    expect(second).toBeGreaterThan(first);
    expect(new Set(a.slice(0, 3).map((r) => r.id)).size).toBe(1);
    expect(a[3]!.body.row).toMatchObject({ interview_score: 8 });
    expect(target.received.find((r) => r.body.id === 'b')!.body).toMatchObject({ account: 'default', entity: 'candidate', op: 'upsert' });
    // B went while A's first change was still failing, before A's second.
    expect(target.received.findIndex((r) => r.body.id === 'b')).toBeLessThan(target.received.findIndex((r) => r.body.seq === second));
    await waitFor(async () => (await destinations.list())[0]!.lag === 0, 5000, 'the lag back to 0');
    expect((await stateOf(added.destination)).state).toBe('active');
  });

  it('sets aside a change whose schedule is spent (dead), lets the entity’s next through, and retry sends it again', async () => {
    const added = await add({ schedule: [0, 10] });
    target.answer((body) => ({ status: body.row?.interview_score == null ? 500 : 200 }));
    start();
    await project(store, [candidateAdded('a', 1), interviewCompleted('a', 2, 5)]);
    await waitFor(
      async () => (await destinations.list())[0]!.dead === 1 && target.received.some((r) => r.status === 200),
      10_000,
      'one dead, then the next change of its entity delivered',
    );
    const seq = target.received[0]!.body.seq;
    expect(target.received.map((r) => [r.body.seq === seq, r.status])).toEqual([
      [true, 500],
      [true, 500],
      [false, 200],
    ]);
    const [dead] = await destinations.dead('default', added.destination, 10);
    expect(dead).toMatchObject({ seq, state: 'dead', attempts: 2, last_status: 500, last_error: 'answered 500' });
    target.answer(() => ({ status: 200 }));
    expect(await destinations.retry('default', added.destination, seq)).toBe(1);
    await waitFor(() => target.received.filter((r) => r.body.seq === seq).length === 3, 10_000, 'the dead change sent again');
    await waitFor(async () => (await destinations.list())[0]!.dead === 0, 5000, 'no dead left');
  });

  it('pauses after consecutive failures, probes with the oldest queued change only, and resumes when it succeeds', async () => {
    const added = await add({ schedule: [0, 10, 10, 10, 10, 10, 10, 10, 10, 200, 200, 200, 200] });
    let down = true;
    target.answer(() => ({ status: down ? 500 : 200 }));
    start({ pauseAfter: 3 });
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2), candidateAdded('c', 3)]);
    await waitFor(async () => (await stateOf(added.destination)).state === 'paused', 10_000, 'the destination paused');
    expect((await stateOf(added.destination)).state_reason).toBe('3 failures in a row');
    // Requests started before the pause may still land; then only the oldest queued change is tried.
    const sincePause = target.received.length;
    await waitFor(() => target.received.length >= sincePause + 4, 10_000, 'probes');
    const oldest = Math.min(...target.received.map((r) => r.body.seq));
    expect(target.received.slice(-2).map((r) => r.body.seq)).toEqual([oldest, oldest]);
    down = false;
    await waitFor(() => new Set(delivered().map((r) => r.body.seq)).size === 3, 10_000, 'everything delivered');
    expect((await stateOf(added.destination)).state).toBe('active');
  });

  it('disables a destination that answers 410, keeping what is queued for enable', async () => {
    const added = await add();
    target.answer(() => ({ status: 410 }));
    start();
    await project(store, [candidateAdded('a', 1)]);
    await waitFor(async () => (await stateOf(added.destination)).state === 'disabled', 10_000, 'disabled by 410');
    expect((await destinations.list())[0]).toMatchObject({ state: 'disabled', reason: 'the receiver answered 410 Gone', queued: 1 });
    target.answer(() => ({ status: 200 }));
    await destinations.setState('default', added.destination, 'active');
    await waitFor(() => target.received.length === 2, 10_000, 'delivered once enabled');
  });

  it('honours Retry-After on 429 over a shorter schedule', async () => {
    await add({ schedule: [0, 10, 10] });
    target.answer((_, attempt) => (attempt === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    start();
    await project(store, [candidateAdded('a', 1)]);
    await waitFor(() => target.received.length === 2, 10_000, 'the second attempt');
    expect(target.received[1]!.at - target.received[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('sends an erasure through a score filter, and a queued change of the person redacted', async () => {
    await add({ filter: { min_score: 7 } });
    start();
    await project(store, [interviewCompleted('a', 1, 9), interviewCompleted('low', 2, 3)]);
    await waitFor(() => target.received.length === 1, 10_000, 'the high score delivered');
    expect(target.received[0]!.body.row).toMatchObject({ candidate_id: 'a', interview_score: 9, email: expect.any(String) });
    await eraseCandidate(store, { candidateId: 'a' }, { reason: 'test' });
    await waitFor(() => target.received.some((r) => r.body.op === 'erase'), 10_000, 'the erasure delivered');
    expect(target.received.map((r) => [r.body.id, r.body.op])).toEqual([
      ['a', 'upsert'],
      ['a', 'erase'],
    ]);
  });

  it('is woken by the commit of a change (on PostgreSQL by its NOTIFY), not only by its poll', async () => {
    await add();
    await project(store, [candidateAdded('a', 1)]);
    start({ pollMs: 600_000 });
    await waitFor(() => delivered().length === 1, 10_000, 'the change recorded before the start');
    await waitFor(async () => (await destinations.list())[0]!.lag === 0, 5000, 'its delivery settled');
    // The next poll is ten minutes away: only the commit can bring this one within the wait.
    await project(store, [candidateAdded('b', 2)]);
    await waitFor(() => delivered().length === 2, 5000, 'the change delivered once committed');
    expect(delivered().map((r) => r.body.id)).toEqual(['a', 'b']);
  });

  it('holds the retention back at the oldest change a destination still needs, queued or not yet looked at', async () => {
    await project(store, [candidateAdded('a', 1)]);
    const added = await add({ schedule: [0] });
    const { cursor } = await stateOf(added.destination);
    await project(store, [candidateAdded('b', 2), candidateAdded('c', 3)]);
    const everything = new Date(Date.now() + 60_000).toISOString();
    const seqs = async () => (await store.changesAfter(0, 100)).changes.map((c) => c.seq);
    const recorded = await seqs();
    // Not yet looked at (after the cursor): kept; what came before the destination: dropped.
    await store.pruneChanges(everything, 1000);
    expect(await seqs()).toEqual(recorded.filter((seq) => seq > cursor));
    // Failed and set aside (dead): kept.
    target.answer(() => ({ status: 500 }));
    start();
    await waitFor(async () => (await destinations.dead('default', added.destination, 10)).length === 2, 10_000, 'both dead');
    await store.pruneChanges(everything, 1000);
    expect(await seqs()).toEqual(recorded.filter((seq) => seq > cursor));
    // Delivered: the retention goes on.
    target.answer(() => ({ status: 200 }));
    await destinations.retry('default', added.destination);
    await waitFor(async () => (await destinations.list())[0]!.lag === 0, 10_000, 'both delivered');
    await store.pruneChanges(everything, 1000);
    expect(await seqs()).toEqual([]);
  });

  it('yields to a busy intake without ever stopping: an intake busy for good still lets a round through', async () => {
    await add();
    let asked = 0;
    start({ intakeBusy: () => ++asked > 0 });
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2)]);
    await waitFor(() => delivered().length === 2, 10_000, 'both delivered while the intake stayed busy');
    expect(asked).toBeGreaterThan(1);
  });

  it('sends each change once while others are out and answered but not yet settled', async () => {
    // Answers 20 ms late: requests overlap the rounds that other answers and the commits start.
    const ids: string[] = [];
    const slow = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req);
      ids.push(String(req.headers['webhook-id']));
      setTimeout(() => res.writeHead(200).end(), 20);
    });
    try {
      await add({ url: `${slow.url}/hook` });
      start();
      const candidates = Array.from({ length: 20 }, (_, i) => `c${i}`);
      await project(
        store,
        candidates.flatMap((id, i) => [candidateAdded(id, i), interviewCompleted(id, i + 20, 7)]),
      );
      await waitFor(async () => (await destinations.list())[0]!.lag === 0, 20_000, 'every change delivered');
      expect(ids.length).toBe(40);
      expect(new Set(ids).size).toBe(40);
    } finally {
      await slow.close();
    }
  });

  it('logs a round that fails the same way once, not at every commit', async () => {
    await add();
    // Another key than the one the destination was sealed with: every round fails to open it.
    const otherKey = join(tmp.dir, 'other-key');
    writeFileSync(otherKey, randomBytes(32).toString('base64'), { mode: 0o600 });
    const lines: Array<{ msg?: string }> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as { msg?: string });
        done();
      },
    });
    let rounds = 0;
    loops.push(
      startDeliveryLoop({
        store,
        destinations: openDestinations(store, { keyFile: otherKey }),
        logger: createLogger({ level: 'warn' }, sink),
        pollMs: 10,
        intakeBusy: () => (rounds++, false),
      }),
    );
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2)]);
    await waitFor(() => rounds >= 20, 10_000, 'twenty rounds');
    expect(lines.filter((line) => line.msg === 'destination: round failed')).toHaveLength(1);
    expect(target.received).toEqual([]);
  });

  it('keeps to its rate, though the four entities could go in parallel', async () => {
    await add({ rate: 5 });
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2), candidateAdded('c', 3), candidateAdded('d', 4)]);
    start();
    await waitFor(() => target.received.length === 4, 10_000, 'four delivered');
    // 5/s: a request every 200 ms as sent; arrivals jitter by a few ms each, so the span is what is measured.
    const span = target.received[3]!.at - target.received[0]!.at;
    expect(span).toBeGreaterThanOrEqual(3 * 200 - 40);
  });

  it('goes with its account: removing the account removes its destinations and their queues', async () => {
    const accounts = openAccounts(store, { keyFile: accountsKeyFile, removalSettleMs: 0 });
    await accounts.add({ account: 'acme' });
    const added = await add({ account: 'acme' });
    expect((await destinations.list('acme')).map((d) => d.destination)).toEqual([added.destination]);
    await accounts.remove('acme', { reason: 'test' });
    expect(await destinations.list('acme')).toEqual([]);
    expect(await destinationsOf(store).get({ account: 'acme', destination: added.destination })).toBeUndefined();
  });

  it('signs with the previous secret beside a rotated one until its overlap ends, so a receiver on either verifies', async () => {
    const added = await add();
    const previous = secret;
    const rotated = await destinations.rotateSecret('default', added.destination, { keepPreviousMs: 60_000 });
    const record = await stateOf(added.destination);
    expect(destinations.open(record).secrets).toEqual([rotated.secret, previous]);
    start();
    await project(store, [candidateAdded('a', 1)]);
    await waitFor(() => target.received.length === 1, 10_000, 'a delivery verified with the previous secret');
    secret = rotated.secret!;
    await project(store, [candidateAdded('b', 2)]);
    await waitFor(() => target.received.length === 2, 10_000, 'a delivery verified with the new secret');
    expect(target.verified).toEqual([true, true]);
    const ended = await destinations.rotateSecret('default', added.destination, { secret: generateSecret(), keepPreviousMs: 0 });
    expect(ended).toEqual({ previousUntil: null });
    expect(destinations.open(await stateOf(added.destination)).secrets).toHaveLength(1);
  });

  it('is delivered by one process at a time: two loops on one database send each change once', async () => {
    await add();
    start();
    start();
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2), candidateAdded('c', 3), candidateAdded('d', 4)]);
    await waitFor(async () => (await destinations.list())[0]!.lag === 0 && target.received.length >= 4, 10_000, 'four delivered');
    expect(target.received.map((r) => r.body.id).sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('starts after --after: 0 sends every change kept (a backfill), N those after N; past the last is refused', async () => {
    await project(store, [candidateAdded('a', 1), candidateAdded('b', 2), candidateAdded('c', 3)]);
    const seqs = (await store.changesAfter(0, 100)).changes.filter((c) => c.entity === 'candidate').map((c) => c.seq);
    const last = (await store.changesAfter(0, 100)).last;
    await expect(add({ after: last + 1 })).rejects.toThrow(`--after must be a seq from 0 to the account's last, ${last}`);
    await add({ after: 0 });
    start();
    await waitFor(() => delivered().length === 3, 10_000, 'the three changes kept');
    expect(delivered().map((r) => r.body.id)).toEqual(['a', 'b', 'c']);
    const second = await destinations.add({
      account: 'default',
      url: `${target.url}/second`,
      filter: { entity: 'candidate' },
      after: seqs[1]!,
      secret,
    });
    await waitFor(() => target.received.filter((r) => r.body.seq === seqs[2]).length === 2, 10_000, 'c again, for the second');
    await waitFor(
      async () => (await destinations.list('default')).find((d) => d.destination === second.destination)!.lag === 0,
      5_000,
      'settled',
    );
    expect(target.received.filter((r) => r.body.seq <= seqs[1]!)).toHaveLength(2);
  });

  it('replays a range to one destination, each change with the webhook-id it had, none outside the range', async () => {
    const added = await add();
    start();
    await project(
      store,
      ['a', 'b', 'c', 'd'].map((id, i) => candidateAdded(id, i + 1)),
    );
    await waitFor(() => delivered().length === 4, 10_000, 'four delivered');
    await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0, 5_000, 'all settled');
    const first = delivered().map((r) => ({ seq: r.body.seq, id: r.id }));
    const queued = await destinations.replay('default', added.destination, { after: first[0]!.seq, until: first[2]!.seq });
    expect(queued).toBe(2);
    await waitFor(() => delivered().length === 6, 10_000, 'two sent again');
    expect(
      delivered()
        .slice(4)
        .map((r) => ({ seq: r.body.seq, id: r.id })),
    ).toEqual(first.slice(1, 3));
    await expect(destinations.replay('default', added.destination, { after: 5, until: 4 })).rejects.toThrow(/must not be below/);
  });

  it('says when the next attempt is due: the retry after a failure, none while disabled or with nothing queued', async () => {
    const added = await add({ schedule: [0, 60_000, 60_000] });
    expect((await destinations.list('default'))[0]!.nextAttemptAt).toBeNull();
    target.answer(() => ({ status: 500 }));
    start({ pauseAfter: 2 });
    const before = Date.now();
    await project(store, [candidateAdded('a', 1)]);
    // Queued, it is due at once; failed, its retry is due a minute (and up to a fifth) later.
    const nextOf = async () => Date.parse((await destinations.list('default'))[0]!.nextAttemptAt ?? 'none');
    await waitFor(async () => (await nextOf()) >= before + 60_000, 10_000, 'the retry due a minute later');
    const next = await nextOf();
    // Up to a fifth of jitter on the 60 s step.
    expect(next).toBeLessThan(Date.now() + 73_000);
    await destinations.setState('default', added.destination, 'disabled');
    expect((await destinations.list('default'))[0]!.nextAttemptAt).toBeNull();
  });

  it('sends its operator events to an operational destination: a delivery set aside, a pause, a resume, a disable', async () => {
    let opsSecret = '';
    const ops = await receiver(() => opsSecret);
    try {
      const watched = await add({ schedule: [0] });
      const operational = await destinations.add({ account: 'default', url: `${ops.url}/ops`, operational: true });
      opsSecret = operational.secret!;
      expect(operational).toMatchObject({ kind: 'operational' });
      await expect(
        destinations.add({ account: 'default', url: `${ops.url}/ops`, operational: true, filter: { entity: 'candidate' } }),
      ).rejects.toThrow(/operational destination .* takes no filter/);
      target.answer((body) => ({ status: body.id === 'dies' ? 500 : 200 }));
      start({ pauseAfter: 2 });
      await project(store, [candidateAdded('dies', 1)]);
      const events = () => ops.received.map((r) => r.body as unknown as Record<string, unknown>);
      await waitFor(() => events().some((e) => e.type === 'delivery.dead'), 10_000, 'delivery.dead');
      const seq = (await store.changesAfter(0, 100)).changes.find((c) => c.entity === 'candidate')!.seq;
      expect(events()[0]).toMatchObject({
        type: 'delivery.dead',
        account: 'default',
        destination: watched.destination,
        seq,
        reason: 'answered 500',
      });
      expect(events()[0]!.at).toEqual(expect.any(String));
      target.answer(() => ({ status: 500 }));
      await project(store, [candidateAdded('x', 2), candidateAdded('y', 3)]);
      await waitFor(() => events().some((e) => e.type === 'destination.paused'), 10_000, 'destination.paused');
      expect(events().find((e) => e.type === 'destination.paused')).toMatchObject({
        destination: watched.destination,
        reason: '2 failures in a row',
      });
      target.answer(() => ({ status: 200 }));
      await destinations.retry('default', watched.destination);
      await waitFor(() => events().some((e) => e.type === 'destination.resumed'), 15_000, 'destination.resumed');
      await destinations.setState('default', watched.destination, 'disabled');
      await waitFor(() => events().some((e) => e.type === 'destination.disabled'), 10_000, 'destination.disabled');
      expect(ops.verified.every(Boolean)).toBe(true);
      // Never a change: only operator events reached it.
      expect(events().every((e) => typeof e.type === 'string' && !('op' in e))).toBe(true);
    } finally {
      await ops.close();
    }
  });

  it('keeps to 16 connections and a bounded read of each answer when the receiver answers 200 and then sends for ever', async () => {
    let open = 0;
    let mostOpen = 0;
    let written = 0;
    const forever = createServer((req, res) => {
      req.resume();
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 120);
      const more = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
      };
      more();
    });
    forever.on('connection', (socket: Socket) => {
      mostOpen = Math.max(mostOpen, ++open);
      socket.on('close', () => open--);
    });
    const started = await listen(forever);
    try {
      await add({ url: `${started.url}/hook` });
      start();
      await project(
        store,
        Array.from({ length: 40 }, (_, i) => candidateAdded(`c${i}`, i)),
      );
      await waitFor(async () => (await destinations.list())[0]!.lag === 0, 20_000, 'every change delivered');
      await waitFor(() => open === 0, 5_000, 'every connection closed');
      expect(mostOpen).toBeLessThanOrEqual(16);
      // 40 answers of 64 KiB read, and what each connection's buffers held when it was closed.
      expect(written).toBeLessThan(40 * 8 * 1024 * 1024);
    } finally {
      await started.close();
    }
  });

  /** A receiver that holds every request unanswered until `release`; its open connections counted. */
  const holding = async () => {
    let open = 0;
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    server.on('connection', (socket: Socket) => {
      open++;
      socket.on('close', () => open--);
    });
    const started = await listen(server);
    return {
      url: started.url,
      open: () => open,
      held: () => held.length,
      release: () => held.splice(0).forEach((res) => res.writeHead(200).end()),
      close: started.close,
    };
  };

  for (const verb of ['disable', 'remove'] as const)
    it(`${verb} ends the destination's requests in flight within a second`, async () => {
      const silent = await holding();
      try {
        const added = await add({ url: `${silent.url}/hook` });
        // Polled every half second, as serve does: the CLI's change is seen at the next round.
        start({ pollMs: 500 });
        await project(store, [candidateAdded('a', 1), candidateAdded('b', 2), candidateAdded('c', 3)]);
        await waitFor(() => silent.held() === 3, 10_000, 'three requests held');
        const cli = await runCli(['destinations', verb, '--db', database, '--destination', added.destination]);
        expect(cli.code, cli.stderr).toBe(0);
        const since = Date.now();
        await waitFor(() => silent.open() === 0, 2_000, 'its connections closed');
        expect(Date.now() - since).toBeLessThan(1_000);
        if (verb === 'disable') {
          // Kept queued as they were, and sent again once enabled.
          expect((await destinations.list())[0]).toMatchObject({ state: 'disabled', queued: 3 });
          expect((await destinationsOf(store).deliveries(added, 'queued', 10)).map((d) => d.attempts)).toEqual([0, 0, 0]);
          await destinations.setState('default', added.destination, 'active');
          await waitFor(() => silent.held() === 6, 10_000, 'the three sent again');
          silent.release();
          await waitFor(async () => (await destinations.list())[0]!.lag === 0, 10_000, 'delivered once enabled');
        }
      } finally {
        silent.release();
        await silent.close();
      }
    });
  it("is held, its cursor back at the head, when the account's changes stop below its cursor (a restore), and goes on from there once enabled", async () => {
    const added = await add();
    start();
    await project(store, [candidateAdded('a', 1)]);
    await waitFor(() => delivered().length === 1, 10_000, 'a delivered');
    const head = (await store.changesAfter(0, 100)).last;
    // As if the database had come back from a backup older than what the destination saw.
    await sqlOn(database).query('UPDATE destinations SET cursor = ? WHERE destination = ?', [head + 5, added.destination]);
    await waitFor(async () => (await stateOf(added.destination)).state === 'paused', 10_000, 'held');
    const held = await stateOf(added.destination);
    expect(held).toMatchObject({ hold: 1, cursor: head });
    expect(held.state_reason).toMatch(new RegExp(`the account's changes stop at seq ${head}, below this destination's cursor ${head + 5}`));
    expect((await destinationsOf(store).events('default', 0, 10)).events.map((e) => e.type)).toEqual(['destination.paused']);
    await project(store, [candidateAdded('b', 2)]);
    await waitFor(async () => (await destinations.list('default'))[0]!.queued === 1, 5_000, 'b queued while held');
    expect(delivered()).toHaveLength(1);
    await destinations.setState('default', added.destination, 'active');
    await waitFor(() => delivered().length === 2, 10_000, 'b delivered once enabled');
  });
});
