// What a receiver runs beside the intake while it is open, as `serve` does, tested in this process
// (docs/destinations.md "Operating", docs/changes.md "Retention"): its destinations delivered by
// default, added by the CLI or by `openDestinations`, to a real HTTP server of the test's own, and
// its close stopping them after the delivery in flight; a destination it cannot open left to a
// process that can; the feed's changes dropped at start past the retention; reconciliation on a
// schedule; retention of people. On both engines.
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { openDestinations } from '../../src/destinations/registry.js';
import { destinationsOf } from '../../src/destinations/sql.js';
import { ChangesDroppedError, ConfigurationError } from '../../src/index.js';
import { createLogger } from '../../src/logging.js';
import { createReceiver, type Receiver, type ReceiverOptions } from '../../src/receiver/create-receiver.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { runCli } from '../support/command-io.js';
import { ENGINES } from '../support/engines.js';
import { KEY_A } from '../support/sandbox-api.js';
import { listen, tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_receiver-background-test-2c9e';
const candidate = (id: string, timestamp?: string) =>
  sampleEvent('candidate.added', { ...(timestamp !== undefined && { timestamp }), data: { campaign_id: 'cmp_bg', candidate_id: id } });

/** A destination of the test's own: each request's body and whether its signature verified; `hold` keeps answers back. */
async function target() {
  const received: Array<{ seq: number; id: string; verified: boolean }> = [];
  let secret = '';
  let held: Promise<void> | undefined;
  let release = () => undefined as void;
  const server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signed = createHmac('sha256', key).update(
      `${String(req.headers['webhook-id'])}.${String(req.headers['webhook-timestamp'])}.${raw}`,
    );
    const body = JSON.parse(raw) as { seq: number; id: string };
    received.push({ seq: body.seq, id: body.id, verified: String(req.headers['webhook-signature']).includes(signed.digest('base64')) });
    await held;
    res.writeHead(200).end();
  });
  return {
    url: `${server.url}/hook`,
    received,
    setSecret: (value: string) => void (secret = value),
    hold: () => void (held = new Promise<void>((resolve) => (release = resolve))),
    release: () => release(),
    close: server.close,
  };
}

/** Log lines, parsed, of a logger at `warn` and above. */
function capturedLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
      done();
    },
  });
  return { logger: createLogger({ level: 'warn' }, sink), lines };
}

describe.each(ENGINES)('a receiver runs what serve runs, on $name', (engine) => {
  const closing: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function fresh() {
    const { database, cleanup } = await engine.fresh();
    const keys = tempDir('prequal-hooks-keys-');
    const keyFile = join(keys.dir, 'accounts-key');
    writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    closing.push(cleanup, keys.cleanup);
    const open = (options: Partial<ReceiverOptions> = {}): Receiver => {
      const receiver = createReceiver({ database, secret: SECRET, accounts: { keyFile }, ...options });
      closing.push(() => receiver.close());
      return receiver;
    };
    return { database, keyFile, keys, open };
  }

  it('delivers a destination the CLI added, signed, by default; close waits for the delivery in flight, then stops', async () => {
    const { database, keyFile, open } = await fresh();
    const to = await target();
    closing.push(to.close);
    const receiver = open();
    await receiver.ready();
    const added = await runCli(['destinations', 'add', '--db', database, '--accounts-key-file', keyFile, '--url', to.url, '--json']);
    expect(added.code, added.stderr).toBe(0);
    to.setSecret((JSON.parse(added.stdout) as { secret: string }).secret);
    await receiver.replay([candidate('cand-1')]);
    await waitFor(() => to.received.length >= 2, 10_000, 'the campaign and the candidate delivered');
    expect(to.received.map((r) => [r.seq, r.verified])).toEqual([
      [1, true],
      [2, true],
    ]);

    to.hold();
    await receiver.replay([candidate('cand-2')]);
    await waitFor(() => to.received.length === 3, 10_000, 'the delivery in flight');
    const closed = receiver.close();
    to.release();
    await closed;
    // Settled before the close ended: nothing queued, nothing left to look at.
    const sql = sqlOn(database);
    expect(await sql.query('SELECT seq FROM destination_deliveries')).toEqual([]);
    expect(await sql.query<{ cursor: number }>('SELECT cursor FROM destinations')).toEqual([{ cursor: 3 }]);

    // Stopped: a change recorded after the close is not sent (another receiver, delivering nothing, records it).
    const recorder = open({ destinations: false });
    await recorder.replay([candidate('cand-3')]);
    const after = await recorder.changesPage({ after: 3 });
    expect(after.changes.map((c) => c.id)).toEqual(['cand-3']);
    await recorder.close();
    expect(to.received.map((r) => r.id)).toEqual(['cmp_bg', 'cand-1', 'cand-2']);
  });

  it("reads and sends off the event loop: on a thread of its own connection, its writes on the receiver's writer", async () => {
    const { keyFile, open } = await fresh();
    const to = await target();
    closing.push(to.close);
    const receiver = open({ destinations: { pollMs: 20 } });
    await receiver.ready();
    // The receiver's own port of the destinations' tables: what delivering asks of its connection.
    const port = destinationsOf(storePorts(await receiver.store()));
    const asked: string[] = [];
    for (const method of ['list', 'due', 'get', 'events', 'commit', 'lease'] as const) {
      const own = port[method].bind(port) as (...args: unknown[]) => Promise<unknown>;
      (port as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        asked.push(method);
        return await own(...args);
      };
    }
    const added = await openDestinations(await receiver.store(), { keyFile }).add({ account: 'default', url: to.url });
    to.setSecret(added.secret!);
    await receiver.replay([candidate('cand-1')]);
    await waitFor(() => to.received.length === 2, 10_000, 'the campaign and the candidate delivered');
    expect(to.received.every((r) => r.verified)).toBe(true);
    // Queued, sent and settled: the lease and the settlements written here. Until the first
    // destination, the receiver read whether there was one (`list`); once the thread runs, nothing.
    await waitFor(() => asked.filter((m) => m === 'commit').length >= 2, 5000, 'the settlements written by the receiver');
    expect(asked).toContain('lease');
    expect(asked.filter((m) => !['commit', 'lease', 'list'].includes(m))).toEqual([]);
    asked.length = 0;
    await receiver.replay([candidate('cand-2')]);
    await waitFor(() => to.received.length === 3, 10_000, 'the second candidate delivered');
    await waitFor(() => asked.includes('commit'), 5000, 'its settlement written by the receiver');
    expect(asked.filter((m) => !['commit', 'lease'].includes(m))).toEqual([]);
  });

  it('destinations: false delivers nothing; a destination added with openDestinations is delivered by the next receiver', async () => {
    const { keyFile, open } = await fresh();
    const to = await target();
    closing.push(to.close);
    const quiet = open({ destinations: false });
    const added = await openDestinations(await quiet.store(), { keyFile }).add({ account: 'default', url: to.url });
    to.setSecret(added.secret!);
    await quiet.replay([candidate('cand-1')]);
    // A later round of the same kind of work shows the first did nothing: the next receiver delivers both.
    await quiet.close();
    expect(to.received).toEqual([]);
    const delivering = open({ destinations: { pollMs: 20 } });
    await delivering.ready();
    await waitFor(() => to.received.length === 2, 10_000, 'both changes delivered');
    expect(to.received.every((r) => r.verified)).toBe(true);
  });

  it('without a destination, runs no delivery thread and logs nothing while it looks; the first one added starts it', async () => {
    const { keyFile, open } = await fresh();
    const { logger, lines } = capturedLogger();
    const receiver = open({ logger, destinations: { pollMs: 10 } });
    await receiver.ready();
    // Its rounds, counted in its metrics: the delivery runs on a thread of its own, whose reads the test cannot see.
    const rounds = async () =>
      Number((await receiver.metrics().getSingleMetricAsString('prequal_hooks_destination_rounds_total')).match(/ (\d+)$/m)?.[1]);
    // Until a destination is there, the receiver itself reads whether one was added.
    const port = destinationsOf(storePorts(await receiver.store()));
    const list = port.list.bind(port);
    let looks = 0;
    port.list = async (...args) => {
      looks += 1;
      return await list(...args);
    };
    await receiver.replay([candidate('cand-1')]);
    await waitFor(() => looks >= 10, 5000, 'ten looks for a destination');
    expect(await rounds()).toBe(0);
    // (A test PostgreSQL server may warn of its own settings: only errors, and the destinations' lines, count.)
    expect(lines.filter((line) => line.level >= 50 || /destination/i.test(line.msg))).toEqual([]);

    const to = await target();
    closing.push(to.close);
    const added = await openDestinations(await receiver.store(), { keyFile }).add({ account: 'default', url: to.url, after: 0 });
    to.setSecret(added.secret!);
    await waitFor(() => to.received.length === 2, 10_000, 'the campaign and the candidate delivered');
    expect(await rounds()).toBeGreaterThan(0);
  });

  it('leaves a destination it cannot open to a receiver that can: its lease is not taken', async () => {
    const { database, keyFile, keys, open } = await fresh();
    const to = await target();
    closing.push(to.close);
    const { logger, lines } = capturedLogger();
    const otherKey = join(keys.dir, 'other-key');
    writeFileSync(otherKey, randomBytes(32).toString('base64'), { mode: 0o600 });
    // A receiver with another key, first: every round fails to open the destination.
    const keyless = createReceiver({ database, secret: SECRET, logger, accounts: { keyFile: otherKey }, destinations: { pollMs: 10 } });
    closing.push(() => keyless.close());
    await keyless.ready();
    const added = await openDestinations(await keyless.store(), { keyFile }).add({ account: 'default', url: to.url });
    to.setSecret(added.secret!);
    await keyless.replay([candidate('cand-1')]);
    await waitFor(() => lines.some((line) => line.msg === 'destination: round failed'), 5000, 'the failure to open it');
    const holder = open({ destinations: { pollMs: 10 } });
    await holder.ready();
    await waitFor(() => to.received.length === 2, 10_000, 'delivered by the receiver that holds the key');
    expect(to.received.map((r) => [r.id, r.verified])).toEqual([
      ['cmp_bg', true],
      ['cand-1', true],
    ]);
  });

  it('drops the changes older than the retention at start (30 days by default), and a reader from before them is told', async () => {
    const { database, open } = await fresh();
    const first = open({ changesRetention: false });
    await first.replay([candidate('cand-1'), candidate('cand-2')]);
    await first.close();
    // Recorded 40 days ago, as a receiver running since then would have kept them.
    const old = new Date(Date.now() - 40 * 24 * 60 * 60_000).toISOString();
    await sqlOn(database).query('UPDATE changes SET at = ? WHERE seq <= 2', [old]);
    const kept = open({ changesRetention: false });
    expect((await kept.changesPage()).changes).toHaveLength(3);
    await kept.close();

    const receiver = open();
    await waitFor(async () => ((await receiver.changesPage()).changes.length === 1 ? true : undefined), 5000, 'the old changes dropped');
    expect((await receiver.changesPage()).changes.map((c) => c.seq)).toEqual([3]);
    await expect(receiver.changesPage({ after: 0 })).rejects.toThrow(ChangesDroppedError);
    expect(() => createReceiver({ database, secret: SECRET, changesRetention: '30 days' })).toThrow(ConfigurationError);
  });

  it('erases the candidates not heard of for eraseInactiveAfter, at start', async () => {
    const { open } = await fresh();
    const receiver = open({ eraseInactiveAfter: '365d' });
    await receiver.replay([candidate('cand-old', '2020-01-02T09:00:00Z'), candidate('cand-new', new Date().toISOString())]);
    await receiver.close();
    const again = open({ eraseInactiveAfter: '365d' });
    await waitFor(async () => ((await again.query.getCandidate('cand-old')) === undefined ? true : undefined), 5000, 'the old one erased');
    expect(await again.query.getCandidate('cand-new')).toMatchObject({ candidate_id: 'cand-new' });
  });
});

describe('a receiver reconciles on a schedule', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ apiKeys: [KEY_A], credits: 777, seed: 'receiver-schedule', log: () => {} });
  });
  afterAll(() => sandbox.close());

  it('runs reconcile.every with the client of the moment: the credits the service holds are projected', async () => {
    const tmp = tempDir();
    let runs = 0;
    const receiver = createReceiver({
      database: tmp.dbPath,
      secret: SECRET,
      reconcile: {
        every: '1s',
        client: () => {
          runs += 1;
          return createClient({ apiKey: KEY_A, baseUrl: sandbox.url, throttle: false });
        },
      },
    });
    try {
      await waitFor(async () => ((await receiver.query.getCredits())?.credits_remaining === 777 ? true : undefined), 10_000, 'credits');
      expect(runs).toBeGreaterThanOrEqual(1);
    } finally {
      await receiver.close();
      tmp.cleanup();
    }
  });
});
