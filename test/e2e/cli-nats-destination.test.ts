// `prequal-hooks destinations add --url nats://… --subject …` and serve publishing through
// JetStream, as an integrator runs them: the real process on a real SQLite file, a real
// nats-server -js that requires a password. What add and list print (the subject, never the
// password, no secret), and a serve killed (SIGKILL) during a burst: the stream holds each change once.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEvent } from '../../src/testing/samples.js';
import { sendSigned } from '../../src/testing/signed-request.js';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { hasNats, startNats, type NatsUnderTest } from '../support/nats-server.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const USER = 'hooks';
const PASSWORD = 'nats-cli-Pa55word-41c8';
const WEBHOOK_SECRET = 'whsec_cli-nats-destination-secret-5b0e';

const tmp = tempDir('prequal-hooks-nats-destination-');
const destinations = (...args: string[]) => runCliProcess(['destinations', ...args]);

describe.skipIf(!hasNats())('prequal-hooks destinations with a nats:// URL', () => {
  let nats: NatsUnderTest;
  let client: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nats = await startNats({ user: USER, password: PASSWORD });
    client = await connect({ servers: `127.0.0.1:${nats.port}`, user: USER, pass: PASSWORD });
    jsm = await jetstreamManager(client);
  });
  afterAll(async () => {
    killChildren();
    await client?.close();
    await nats?.stop();
    tmp.cleanup();
  });

  it('adds and lists it with its subject and type, no secret, the password masked; refuses it without --subject', async () => {
    const db = `${tmp.dir}/list.db`;
    expect((await runCliProcess(['migrate', '--db', db])).code).toBe(0);
    const added = await destinations('add', '--db', db, '--url', nats.url, '--subject', 'orders.changes', '--json');
    expect(added.code, added.stderr).toBe(0);
    const body = JSON.parse(added.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ url: `nats://***@127.0.0.1:${nats.port}`, subject: 'orders.changes', state: 'active', type: 'nats' });
    expect(body).not.toHaveProperty('secret');
    const listed = await destinations('list', '--db', db, '--table');
    expect(listed.stdout).toContain('subject orders.changes');
    const missing = await destinations('add', '--db', db, '--url', nats.url);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--subject is required/);
    for (const output of [added, listed, missing]) expect(output.stdout + output.stderr).not.toContain(PASSWORD);
  });

  it('a serve killed (SIGKILL) during a burst: the next one publishes the rest, and the stream holds each change once, in order', async () => {
    await jsm.streams.add({ name: 'KILLED', subjects: ['killed.>'] });
    const db = `${tmp.dir}/killed.db`;
    const serveArgs = ['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET];
    let serve = await startServe(serveArgs);
    const count = async () => (await jsm.streams.info('KILLED')).state.messages;
    try {
      const added = await destinations('add', '--db', db, '--url', nats.url, '--subject', 'killed.changes', '--filter', 'entity=candidate');
      expect(added.code, added.stderr).toBe(0);
      const ids = Array.from({ length: 40 }, (_, i) => `cand-n${i + 1}`);
      const sending = (async () => {
        for (const id of ids) {
          const event = sampleEvent('candidate.added', { data: { candidate_id: id } });
          await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET }).catch(() => undefined);
        }
      })();
      // Killed in the middle of its publishing.
      await waitFor(async () => (await count()) >= 5, 20_000, 'publishing under way');
      serve.child.kill('SIGKILL');
      await new Promise((resolve) => serve.child.once('exit', resolve));
      await sending;
      serve = await startServe(serveArgs);
      // Those the killed process never took are sent again.
      for (const id of ids) {
        const event = sampleEvent('candidate.added', { data: { candidate_id: id } });
        expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      }
      const feed = (await runCliProcess(['changes', '--db', db, '--json'])).stdout.split('\n').filter((line) => line !== '');
      const expected = feed
        .map((line) => JSON.parse(line) as { seq: number; entity: string })
        .filter((c) => c.entity === 'candidate')
        .map((c) => c.seq);
      // The killed process's lease ends within 10 s; then the rest goes.
      await waitFor(async () => (await count()) >= ids.length, 30_000, 'every change published');
      const seqs: number[] = [];
      const { state } = await jsm.streams.info('KILLED');
      for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
        const message = await jsm.streams.getMessage('KILLED', { seq });
        seqs.push((JSON.parse(message!.string()) as { seq: number }).seq);
      }
      expect(new Set(seqs).size).toBe(seqs.length);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(seqs).toEqual(expected);
      expect(serve.stdout() + serve.stderr()).not.toContain(PASSWORD);
    } finally {
      await serve.stop('SIGTERM');
    }
  });
});
