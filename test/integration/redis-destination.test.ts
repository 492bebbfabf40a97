// Redis destinations on both engines, against a real redis-server (test/support/redis-server.ts):
// the delivery loop appending the changes events record to a stream under `<seq>-0`, in seq order,
// through the filter; an append redone after a crash (between XADD and its settling) not doubled;
// the server away for a while then back (nothing set aside, nothing lost, order kept, the
// destination paused and active again); retry making a waiting change due now; trimming at the
// oldest change the feed keeps; the connection closed when the destination is removed.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDeliveryLoop, type DeliveryLoop } from '../../src/destinations/delivery-loop.js';
import type { NetworkRules } from '../../src/destinations/network-policy.js';
import { openDestinations, type AddDestination, type Destinations } from '../../src/destinations/registry.js';
import { createLogger } from '../../src/logging.js';
import { eraseCandidate } from '../../src/privacy/erase.js';
import { storePorts, type Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/samples.js';
import { ENGINES, freshStore } from '../support/engines.js';
import { runCli } from '../support/command-io.js';
import { hasRedis, startRedis, type RedisUnderTest } from '../support/redis-server.js';
import { startRespServer } from '../support/resp-server.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { destinationsOf } from '../../src/destinations/sql.js';
import { candidates, project } from '../support/destination-events.js';

const logger = createLogger({ level: 'silent' });
const PASSWORD = 'redis-Pa55-4c1d';

describe.skipIf(!hasRedis()).each(ENGINES)('Redis destinations on $name', (engine) => {
  let redis: RedisUnderTest & { port: number };
  let reader: ReturnType<typeof createClient>;
  let store: Store;
  let database: string;
  let close: () => Promise<void>;
  let destinations: Destinations;
  let loops: DeliveryLoop[];
  let tmp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    reader = createClient({ url: redis.url });
    reader.on('error', () => undefined);
    await reader.connect();
  });
  afterAll(async () => {
    await reader?.close();
    await redis?.stop();
  });

  beforeEach(async () => {
    ({ store, database, close } = await freshStore(engine));
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

  const stream = () => `test:${randomBytes(4).toString('hex')}`;
  const add = (request: Partial<AddDestination> & { stream: string }) =>
    destinations.add({ account: 'default', url: redis.url, filter: { entity: 'candidate' }, ...request });
  const start = (options: { pauseAfter?: number; network?: NetworkRules } = {}) => {
    const loop = startDeliveryLoop({ store, destinations, logger, pollMs: 20, timeoutMs: 1000, ...options });
    loops.push(loop);
    return loop;
  };
  const entries = async (name: string) => (await reader.xRange(name, '-', '+')) ?? [];
  const candidateSeqs = async () =>
    (await store.forAccount('default').changesAfter(0, 1000)).changes.filter((c) => c.entity === 'candidate').map((c) => c.seq);

  it('appends each change that passes the filter under <seq>-0, in seq order, with its fields; the URL password never shown', async () => {
    const name = stream();
    const added = await add({ stream: name });
    expect(added).toMatchObject({ url: `redis://***@127.0.0.1:${redis.port}`, stream: name });
    expect(added).not.toHaveProperty('secret');
    expect(JSON.stringify(await destinations.list('default'))).not.toContain(PASSWORD);
    start();
    await project(store, candidates(1, 5));
    const seqs = await candidateSeqs();
    expect(seqs).toHaveLength(5);
    await waitFor(async () => (await entries(name)).length === 5, 10_000, 'five entries');
    const read = await entries(name);
    expect(read.map((e) => e.id)).toEqual(seqs.map((seq) => `${seq}-0`));
    expect(read[0]!.message).toMatchObject({ entity: 'candidate', id: 'cand_1', op: 'upsert', account: 'default' });
    expect(JSON.parse(read[0]!.message.change!)).toMatchObject({ seq: seqs[0], entity: 'candidate', id: 'cand_1', account: 'default' });
    await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0, 5_000, 'nothing queued');
  });

  it('pauses, held until enabled, when its stream already holds entries it did not write; nothing is appended, lost or counted delivered', async () => {
    const name = stream();
    // A Redis already in use: someone else's entry past every change this test makes.
    await reader.xAdd(name, '1000-0', { note: 'not ours' });
    const added = await add({ stream: name });
    start();
    await project(store, candidates(1, 8));
    await waitFor(async () => (await destinations.list('default'))[0]!.state === 'paused', 10_000, 'the destination paused');
    const [paused] = await destinations.list('default');
    expect(paused!.reason).toMatch(
      new RegExp(`the Redis stream "${name}" already holds entries up to 1000-0 that this destination did not write`),
    );
    await waitFor(async () => (await destinations.list('default'))[0]!.queued === 8, 5_000, 'the eight changes queued');
    expect(paused!.dead).toBe(0);
    expect(await reader.xLen(name)).toBe(1);
    // Held: no probe appends, however long it waits.
    const seqs = await candidateSeqs();
    await project(store, candidates(9, 1));
    await waitFor(async () => (await destinations.list('default'))[0]!.queued === 9, 5_000, 'the ninth change queued');
    expect(await reader.xLen(name)).toBe(1);
    const [event] = (await destinationsOf(store).events('default', 0, 10)).events;
    expect(event).toMatchObject({ type: 'destination.paused', destination: added.destination, reason: paused!.reason });
    // The operator empties the stream and enables the destination: every change goes, in order.
    await reader.del(name);
    await destinations.setState('default', added.destination, 'active');
    await waitFor(async () => (await entries(name)).length === 9, 10_000, 'nine entries');
    expect((await entries(name)).slice(0, 8).map((e) => e.id)).toEqual(seqs.map((seq) => `${seq}-0`));
  });

  it("erasing a person deletes their earlier changes' entries from the stream, then appends the erase entry", async () => {
    const name = stream();
    await add({ stream: name });
    start();
    const person = (id: string, minute: number) =>
      sampleEvent('candidate.added', {
        timestamp: `2026-11-09T08:${String(minute).padStart(2, '0')}:00.000Z`,
        data: { candidate_id: id, campaign_id: 'cmp_1', first_name: `Ysaline-${id}`, email: `${id}@example.test`, phone: '+33655412798' },
      });
    await project(store, [person('gone', 1), person('kept', 2), person('gone', 3)]);
    const recorded = (await candidateSeqs()).length;
    await waitFor(async () => (await entries(name)).length === recorded, 10_000, 'an entry a change');
    await waitFor(async () => (await destinations.list('default'))[0]!.lag === 0, 5_000, 'nothing queued');
    await eraseCandidate(store, { candidateId: 'gone' }, { reason: 'test' });
    await waitFor(async () => (await entries(name)).some((e) => e.message.op === 'erase'), 10_000, 'the erase entry');
    const left = await entries(name);
    expect(left.map((e) => [e.message.id, e.message.op])).toEqual([
      ['kept', 'upsert'],
      ['gone', 'erase'],
    ]);
    expect(JSON.stringify(left)).not.toMatch(/Ysaline-gone|gone@example/);
    expect(JSON.stringify(left)).toContain('Ysaline-kept');
  });

  it('the default stream is prequal-hooks:<account>:changes', async () => {
    const added = await destinations.add({ account: 'default', url: redis.url });
    expect(added.stream).toBe('prequal-hooks:default:changes');
  });

  it('a crash between an append and its settling sends it again, and Redis keeps it once', async () => {
    const name = stream();
    await add({ stream: name });
    // The first two settlings fail as a crash would leave them: appended, still queued.
    const settle = destinationsOf(store).delivered.bind(destinationsOf(store));
    let crashes = 2;
    destinationsOf(store).delivered = async (key, seq, at) => {
      if (crashes-- > 0) throw new Error('killed before settling');
      await settle(key, seq, at);
    };
    start();
    await project(store, candidates(1, 4));
    const seqs = await candidateSeqs();
    // Every change appended and settled (a queue empty before the changes were looked at is not the end).
    await waitFor(
      async () => (await entries(name)).length >= seqs.length && (await destinations.list('default'))[0]!.queued === 0 && crashes < 0,
      10_000,
      'all appended and settled',
    );
    expect((await entries(name)).map((e) => e.id)).toEqual(seqs.map((seq) => `${seq}-0`));
  });

  it('a server away for a while: retried (never set aside), paused, and once back everything is appended, in order', async () => {
    const other = await startRedis();
    const name = stream();
    const added = await destinations.add({
      account: 'default',
      url: other.url,
      stream: name,
      filter: { entity: 'candidate' },
      schedule: [0, 10, 20],
    });
    await other.stop();
    start({ pauseAfter: 3 });
    await project(store, candidates(1, 6));
    const key = { account: 'default', destination: added.destination };
    await waitFor(
      async () => ((await destinationsOf(store).deliveries(key, 'queued', 1))[0]?.attempts ?? 0) > 5,
      15_000,
      'attempts past the end of the schedule',
    );
    expect((await destinationsOf(store).get(key))!.state).toBe('paused');
    expect(await destinationsOf(store).deliveries(key, 'dead', 10)).toEqual([]);
    const back = await startRedis({ port: other.port });
    try {
      const client = createClient({ url: back.url });
      await client.connect();
      await waitFor(async () => ((await client.xRange(name, '-', '+')) ?? []).length === 6, 15_000, 'six entries');
      const seqs = await candidateSeqs();
      expect(((await client.xRange(name, '-', '+')) ?? []).map((e) => e.id)).toEqual(seqs.map((seq) => `${seq}-0`));
      await client.close();
      await waitFor(async () => (await destinationsOf(store).get(key))!.state === 'active', 5_000, 'active again');
    } finally {
      await back.stop();
    }
  });

  it('retry makes a change waiting for its next attempt due now', async () => {
    const other = await startRedis();
    const name = stream();
    const added = await destinations.add({ account: 'default', url: other.url, stream: name, schedule: [0, 3_600_000] });
    await other.stop();
    start();
    await project(store, candidates(1, 2));
    const key = { account: 'default', destination: added.destination };
    await waitFor(async () => (await destinationsOf(store).deliveries(key, 'queued', 1))[0]?.attempts === 1, 10_000, 'one failure');
    const back = await startRedis({ port: other.port });
    try {
      expect(await destinations.retry('default', added.destination)).toBe(1);
      const client = createClient({ url: back.url });
      await client.connect();
      await waitFor(async () => ((await client.xRange(name, '-', '+')) ?? []).length > 0, 10_000, 'appended after retry');
      await client.close();
    } finally {
      await back.stop();
    }
  });

  it('trims the stream below the oldest change the feed keeps', async () => {
    await reader.configSet('stream-node-max-entries', '2');
    try {
      const name = stream();
      await add({ stream: name });
      start();
      await project(store, candidates(1, 10));
      await waitFor(async () => (await entries(name)).length === 10, 10_000, 'ten entries');
      // Retention drops the oldest changes; the next append trims the stream at the oldest kept.
      await storePorts(store).pruneChanges('2999-01-01T00:00:00.000Z', 6);
      const { oldest } = await store.forAccount('default').changesAfter(0, 1);
      await project(store, candidates(20, 1));
      await waitFor(
        async () => Number((await entries(name))[0]!.id.split('-')[0]) >= oldest! - 2,
        10_000,
        'trimmed near the oldest kept change',
      );
      expect((await entries(name)).at(-1)!.message.id).toBe('cand_20');
    } finally {
      await reader.configSet('stream-node-max-entries', '100');
    }
  });

  it('closes its connection once the destination is removed', async () => {
    const name = stream();
    const added = await add({ stream: name });
    const clients = async () => (await reader.clientList()).length;
    start();
    await project(store, candidates(1, 1));
    await waitFor(async () => (await entries(name)).length === 1, 10_000, 'one entry');
    const connected = await clients();
    await destinations.remove('default', added.destination);
    await waitFor(async () => (await clients()) === connected - 1, 10_000, 'its connection closed');
    expect(await clients()).toBe(connected - 1);
  });

  it('cuts a megabyte-long error reply to 1 KiB where it is stored and logged', async () => {
    // A server of the test's own: a real redis-server never answers XADD with a megabyte.
    const huge = `ERR ${'x'.repeat(1024 * 1024)}`;
    const liar = await startRespServer((command) => (command[0]?.toUpperCase() === 'XADD' ? `-${huge}\r\n` : '+OK\r\n'));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    try {
      const added = await destinations.add({ account: 'default', url: liar.url, stream: stream(), schedule: [0, 3_600_000] });
      loops.push(startDeliveryLoop({ store, destinations, logger: createLogger({ level: 'warn' }, sink), pollMs: 20, timeoutMs: 1000 }));
      await project(store, candidates(1, 1));
      const key = { account: 'default', destination: added.destination };
      await waitFor(
        async () => (await destinationsOf(store).deliveries(key, 'queued', 1))[0]?.last_error ?? undefined,
        10_000,
        'a failure',
      );
      const [failed] = await destinationsOf(store).deliveries(key, 'queued', 1);
      expect(failed!.last_error!.startsWith('ERR xxx')).toBe(true);
      expect(Buffer.byteLength(failed!.last_error!)).toBeLessThanOrEqual(1024);
      expect(failed!.last_error).toMatch(/\(1048580 bytes, cut\)$/);
      await waitFor(() => lines.some((line) => line.includes('append to the Redis stream failed')), 5_000, 'the failure logged');
      expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(2048);
    } finally {
      await liar.close();
    }
  });

  for (const verb of ['disable', 'remove'] as const)
    it(`${verb} ends an append in flight within a second, not at its 15 s deadline`, async () => {
      // A server of the test's own that takes XADD and never answers it.
      let appends = 0;
      const silent = await startRespServer((command) => (command[0]?.toUpperCase() === 'XADD' ? void appends++ : '+OK\r\n'));
      try {
        const added = await destinations.add({ account: 'default', url: silent.url, stream: stream() });
        loops.push(startDeliveryLoop({ store, destinations, logger, pollMs: 500, timeoutMs: 15_000 }));
        await project(store, candidates(1, 1));
        await waitFor(() => appends === 1, 10_000, 'an append in flight');
        const cli = await runCli(['destinations', verb, '--db', database, '--destination', added.destination]);
        expect(cli.code, cli.stderr).toBe(0);
        const since = Date.now();
        await waitFor(() => silent.open() === 0, 2_000, 'its connection closed');
        expect(Date.now() - since).toBeLessThan(1_000);
        if (verb === 'disable') expect((await destinationsOf(store).deliveries(added, 'queued', 1))[0]).toMatchObject({ attempts: 0 });
      } finally {
        await silent.close();
      }
    });

  it('disable ends a connection that never gets past its handshake within a second', async () => {
    // A server of the test's own that takes the connection and answers nothing.
    let hellos = 0;
    const silent = await startRespServer(() => void hellos++);
    try {
      const added = await destinations.add({ account: 'default', url: silent.url, stream: stream() });
      loops.push(startDeliveryLoop({ store, destinations, logger, pollMs: 500, timeoutMs: 15_000 }));
      await project(store, candidates(1, 1));
      await waitFor(() => hellos > 0, 10_000, 'connecting');
      const cli = await runCli(['destinations', 'disable', '--db', database, '--destination', added.destination]);
      expect(cli.code, cli.stderr).toBe(0);
      const since = Date.now();
      await waitFor(() => silent.open() === 0, 2_000, 'its connection closed');
      expect(Date.now() - since).toBeLessThan(1_000);
    } finally {
      await silent.close();
    }
  });

  it('refuses to connect where the network policy denies: a name resolving there or an address in another spelling; a hole appends', async () => {
    const byName = stream();
    const decimal = stream();
    const urls = { [byName]: `redis://:${PASSWORD}@localhost:${redis.port}`, [decimal]: `redis://:${PASSWORD}@2130706433:${redis.port}` };
    const added: Array<{ destination: string; account: string }> = [];
    for (const [name, url] of Object.entries(urls))
      added.push(
        await destinations.add({ account: 'default', url, stream: name, filter: { entity: 'candidate' }, schedule: [0, 3_600_000] }),
      );
    const denied = startDeliveryLoop({ store, destinations, logger, pollMs: 20, network: { deny: ['127.0.0.0/8'] } });
    loops.push(denied);
    await project(store, candidates(1, 1));
    const errors = await waitFor(
      async () => {
        const all = await Promise.all(
          added.map(async (d) => (await destinationsOf(store).deliveries(d, 'queued', 1))[0]?.last_error ?? undefined),
        );
        return all.every((e) => e !== undefined) ? all : undefined;
      },
      10_000,
      'both refused',
    );
    expect(errors).toEqual([
      'refused by the network policy: localhost resolves to 127.0.0.1, which is in 127.0.0.0/8, a range denied to destinations',
      'refused by the network policy: 2130706433 is 127.0.0.1, which is in 127.0.0.0/8, a range denied to destinations',
    ]);
    expect(await entries(byName)).toEqual([]);
    expect(await entries(decimal)).toEqual([]);
    await denied.stop(1000);
    for (const d of added) await destinations.retry('default', d.destination);
    start({ network: { deny: ['127.0.0.0/8'], allow: ['127.0.0.1/32', '::1/128'] } });
    await waitFor(
      async () => (await entries(byName)).length === 1 && (await entries(decimal)).length === 1,
      10_000,
      'appended through the hole',
    );
  });
});
