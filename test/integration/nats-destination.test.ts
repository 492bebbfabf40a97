// NATS JetStream destinations on both engines, against a real nats-server -js
// (test/support/nats-server.ts): the delivery loop publishing the changes events record to a
// subject, in seq order, through the filter, each with `Nats-Msg-Id` its webhook-id and counted once
// the stream acknowledged it; a subject no stream captures pausing the destination at once, and the
// probe resuming it once the stream is there; a publish redone after a crash (between the PubAck and
// its settling) kept once, within the duplicate window and past it.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDeliveryLoop, type DeliveryLoop } from '../../src/destinations/delivery-loop.js';
import { openDestinations, type AddDestination, type Destinations } from '../../src/destinations/registry.js';
import { webhookId } from '../../src/destinations/signing.js';
import { destinationsOf } from '../../src/destinations/sql.js';
import { createLogger } from '../../src/logging.js';
import { eraseCandidate } from '../../src/privacy/erase.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/samples.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { hasNats, startNats, type NatsUnderTest } from '../support/nats-server.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { candidates, project } from '../support/destination-events.js';

const logger = createLogger({ level: process.env.NATS_TEST_LOG === '1' ? 'warn' : 'silent' });
const USER = 'hooks';
const PASSWORD = 'nats-Pa55-7e3f';

/** Every message of a stream, oldest first: its subject, its Nats-Msg-Id and its body. */
export async function messagesOf(
  jsm: JetStreamManager,
  stream: string,
): Promise<Array<{ subject: string; msgId: string | undefined; body: string }>> {
  const { state } = await jsm.streams.info(stream);
  const read = [];
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
    // A message deleted (an erased person's) is a gap in the sequence.
    const message = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (message !== null) read.push({ subject: message.subject, msgId: message.header?.get('Nats-Msg-Id'), body: message.string() });
  }
  return read;
}

describe.skipIf(!hasNats()).each(ENGINES)('NATS JetStream destinations on $name', (engine) => {
  let nats: NatsUnderTest;
  let client: NatsConnection;
  let jsm: JetStreamManager;
  let store: Store;
  let close: () => Promise<void>;
  let destinations: Destinations;
  let loops: DeliveryLoop[];
  let tmp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    nats = await startNats({ user: USER, password: PASSWORD });
    client = await connect({ servers: `127.0.0.1:${nats.port}`, user: USER, pass: PASSWORD });
    jsm = await jetstreamManager(client);
  });
  afterAll(async () => {
    await client?.close();
    await nats?.stop();
  });

  beforeEach(async () => {
    ({ store, close } = await freshStore(engine));
    tmp = tempDir();
    const keyFile = join(tmp.dir, 'accounts-key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    destinations = openDestinations(store, { keyFile });
    loops = [];
  });
  afterEach(async () => {
    await Promise.all(loops.map((loop) => loop.stop(1000)));
    await close();
    tmp.cleanup();
  });

  /** A stream of its own capturing `<name>.>`, with a duplicate window (ms). */
  const stream = async (duplicateWindowMs = 120_000) => {
    const name = `T${randomBytes(4).toString('hex')}`;
    await jsm.streams.add({ name, subjects: [`${name}.>`], duplicate_window: duplicateWindowMs * 1_000_000 });
    return name;
  };
  const add = (request: Partial<AddDestination> & { subject: string }) =>
    destinations.add({ account: 'default', url: nats.url, filter: { entity: 'candidate' }, ...request });
  const start = () => {
    const loop = startDeliveryLoop({ store, destinations, logger, pollMs: 20, timeoutMs: 2000 });
    loops.push(loop);
    return loop;
  };
  const candidateChanges = async () =>
    (await store.forAccount('default').changesAfter(0, 1000)).changes.filter((c) => c.entity === 'candidate');

  it('publishes each change that passes the filter, in seq order, with Nats-Msg-Id its webhook-id; the password never shown', async () => {
    const name = await stream();
    const added = await add({ subject: `${name}.changes` });
    expect(added).toMatchObject({ url: `nats://***@127.0.0.1:${nats.port}`, subject: `${name}.changes` });
    expect(added).not.toHaveProperty('secret');
    expect(JSON.stringify(await destinations.list('default'))).not.toContain(PASSWORD);
    start();
    await project(store, [...candidates(1, 5), sampleEvent('campaign.created', { data: { campaign_id: 'cmp_9' } })]);
    const changes = await candidateChanges();
    expect(changes).toHaveLength(5);
    await waitFor(async () => (await messagesOf(jsm, name)).length === 5, 10_000, 'five messages');
    const read = await messagesOf(jsm, name);
    expect(read.map((m) => JSON.parse(m.body).seq)).toEqual(changes.map((c) => c.seq));
    expect(read[0]).toMatchObject({ subject: `${name}.changes` });
    expect(JSON.parse(read[0]!.body)).toMatchObject({
      account: 'default',
      seq: changes[0]!.seq,
      entity: 'candidate',
      id: 'cand_1',
      op: 'upsert',
    });
    const ids = read.map((m) => m.msgId);
    expect(ids[0]).toBe(webhookId(added.destination, { ...changes[0]!, events: JSON.parse(changes[0]!.events) as string[] }));
    expect(new Set(ids).size).toBe(5);
    await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0, 5_000, 'nothing queued');
  });

  it("erasing a person deletes their earlier changes' messages from the stream, bytes overwritten, then publishes the erase", async () => {
    const name = await stream();
    await add({ subject: `${name}.changes` });
    start();
    const person = (id: string, minute: number) =>
      sampleEvent('candidate.added', {
        timestamp: `2026-11-09T08:${String(minute).padStart(2, '0')}:00.000Z`,
        data: { candidate_id: id, campaign_id: 'cmp_1', first_name: `Ysaline-${id}`, email: `${id}@example.test`, phone: '+33655412798' },
      });
    await project(store, [person('gone', 1), person('kept', 2)]);
    await project(store, [
      sampleEvent('candidate.interview.started', { timestamp: '2026-11-09T08:05:00.000Z', data: { candidate_id: 'gone' } }),
    ]);
    const recorded = (await candidateChanges()).length;
    await waitFor(async () => (await messagesOf(jsm, name)).length === recorded, 10_000, 'a message a change');
    await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0, 5_000, 'nothing queued');
    await eraseCandidate(store, { candidateId: 'gone' }, { reason: 'test' });
    await waitFor(async () => (await messagesOf(jsm, name)).some((m) => JSON.parse(m.body).op === 'erase'), 10_000, 'the erase message');
    const left = await messagesOf(jsm, name);
    expect(left.map((m) => [JSON.parse(m.body).id, JSON.parse(m.body).op])).toEqual([
      ['kept', 'upsert'],
      ['gone', 'erase'],
    ]);
    expect(JSON.stringify(left)).not.toMatch(/Ysaline-gone|gone@example/);
    expect(JSON.stringify(left)).toContain('Ysaline-kept');
    // Deleted with `erase`: the stream's files keep none of the person's bytes either.
    expect(nats.storedBytes()).not.toMatch(/Ysaline-gone|gone@example/);
  });

  it('a subject no stream captures pauses it at the first publish, saying so; once the stream is there the probe resumes it, in order', async () => {
    const name = `T${randomBytes(4).toString('hex')}`;
    const added = await add({ subject: `${name}.changes`, schedule: [0, 50] });
    start();
    await project(store, candidates(1, 3));
    await waitFor(async () => (await destinations.list('default'))[0]!.state === 'paused', 10_000, 'paused');
    const key = { account: 'default', destination: added.destination };
    const [paused] = await destinations.list('default');
    expect(paused!.reason).toContain(`no JetStream stream captures the subject "${name}.changes"`);
    // At once: one failed attempt, not the breaker's five.
    const [first] = await destinationsOf(store).deliveries(key, 'queued', 1);
    expect(first!.attempts).toBeLessThanOrEqual(2);
    const [event] = (await destinationsOf(store).events('default', 0, 10)).events;
    expect(event).toMatchObject({ type: 'destination.paused', destination: added.destination, reason: paused!.reason });
    expect(paused!.dead).toBe(0);
    await jsm.streams.add({ name, subjects: [`${name}.>`] });
    await waitFor(async () => (await messagesOf(jsm, name)).length === 3, 10_000, 'three messages');
    await waitFor(async () => (await destinations.list('default'))[0]!.state === 'active', 5_000, 'active again');
    const changes = await candidateChanges();
    expect((await messagesOf(jsm, name)).map((m) => JSON.parse(m.body).seq)).toEqual(changes.map((c) => c.seq));
  });

  for (const [window, label] of [
    [120_000, 'within the duplicate window'],
    [100, 'past the duplicate window'],
  ] as const)
    it(`a crash between a PubAck and its settling publishes it again, and the stream keeps it once (${label})`, async () => {
      const name = await stream(window);
      await add({ subject: `${name}.changes` });
      // The first two settlings fail as a crash would leave them: published, still queued.
      const port = destinationsOf(store);
      const settle = port.delivered.bind(port);
      let crashes = 2;
      port.delivered = async (key, seq, at) => {
        if (crashes-- > 0) {
          // The time is the scenario: the publish is redone once the stream's duplicate window has passed.
          const acked = Date.now();
          if (window < 1000) await waitFor(() => Date.now() - acked > window * 2, 5_000, 'the duplicate window passed');
          throw new Error('killed before settling');
        }
        await settle(key, seq, at);
      };
      start();
      await project(store, candidates(1, 4));
      const changes = await candidateChanges();
      await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0 && crashes < 0, 10_000, 'all published and settled');
      expect((await messagesOf(jsm, name)).map((m) => JSON.parse(m.body).seq)).toEqual(changes.map((c) => c.seq));
    });

  it('a server without JetStream is a failure of the destination, retried (never dead); retry makes it due now', async () => {
    const plain = await startNats({ jetstream: false });
    try {
      const added = await destinations.add({ account: 'default', url: plain.url, subject: 'orders.changes', schedule: [0, 3_600_000] });
      start();
      await project(store, candidates(1, 1));
      await waitFor(async () => (await destinations.list('default'))[0]!.state === 'paused', 10_000, 'paused');
      expect((await destinations.list('default'))[0]!.reason).toMatch(/or the NATS server runs without JetStream/);
      expect(await destinations.retry('default', added.destination)).toBe(1);
      expect(await destinationsOf(store).deliveries(added, 'dead', 10)).toEqual([]);
    } finally {
      await plain.stop();
    }
  });

  it('refuses a subject with a wildcard or a space, a missing subject, --stream, --secret and --rate', async () => {
    for (const [request, message] of [
      [{ subject: 'orders.*' }, /--subject must be a NATS subject/],
      [{ subject: 'orders changes' }, /--subject must be a NATS subject/],
      [{}, /--subject is required/],
      [{ subject: 'a', stream: 's' }, /--stream is for redis/],
      [{ subject: 'a', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, /--secret is for http/],
      [{ subject: 'a', rate: 5 }, /--rate is for http/],
    ] as const)
      await expect(destinations.add({ account: 'default', url: nats.url, ...request })).rejects.toThrow(message);
    await expect(destinations.add({ account: 'default', url: 'https://example.com/hook', subject: 'a' })).rejects.toThrow(
      /--subject is for nats/,
    );
  });
});
