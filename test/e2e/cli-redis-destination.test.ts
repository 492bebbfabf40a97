// `prequal-hooks destinations add --url redis://…` and serve appending to the stream, as an
// integrator runs them: the real process on a real SQLite file, a real redis-server that requires
// a password. What add and list print (the stream, never the password, no secret), and serve
// appending the changes of the events it receives under `<seq>-0`, in seq order.
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleEvent } from '../../src/testing/samples.js';
import { sendSigned } from '../../src/testing/signed-request.js';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { hasRedis, startRedis, type RedisUnderTest } from '../support/redis-server.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const PASSWORD = 'redis-cli-Pa55word-9b2e';
const WEBHOOK_SECRET = 'whsec_cli-redis-destination-secret-7d1a';

const tmp = tempDir('prequal-hooks-redis-destination-');
const destinations = (...args: string[]) => runCliProcess(['destinations', ...args]);

describe.skipIf(!hasRedis())('prequal-hooks destinations with a redis:// URL', () => {
  let redis: RedisUnderTest & { port: number };
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
  });
  afterAll(async () => {
    killChildren();
    await redis?.stop();
    tmp.cleanup();
  });

  it('adds and lists it with its stream, no secret, the password masked; refuses --secret and --rate for it', async () => {
    const db = `${tmp.dir}/list.db`;
    expect((await runCliProcess(['migrate', '--db', db])).code).toBe(0);
    const added = await destinations('add', '--db', db, '--url', redis.url, '--stream', 'orders:changes', '--json');
    expect(added.code, added.stderr).toBe(0);
    const body = JSON.parse(added.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ url: `redis://***@127.0.0.1:${redis.port}`, stream: 'orders:changes', state: 'active' });
    expect(body).not.toHaveProperty('secret');
    const plain = await destinations('add', '--db', db, '--url', redis.url);
    expect(plain.stdout).toContain('stream prequal-hooks:default:changes');
    const listed = await destinations('list', '--db', db, '--table');
    expect(listed.stdout).toContain(`redis://***@127.0.0.1:${redis.port}`);
    expect(listed.stdout).toContain('stream orders:changes');
    expect(listed.stdout).toContain('stream prequal-hooks:default:changes');
    const json = JSON.parse((await destinations('list', '--db', db, '--json')).stdout) as { destinations: Array<{ stream?: string }> };
    expect(json.destinations.map((d) => d.stream).sort()).toEqual(['orders:changes', 'prequal-hooks:default:changes']);
    for (const output of [added, plain, listed]) expect(output.stdout + output.stderr).not.toContain(PASSWORD);
    const secret = await destinations('add', '--db', db, '--url', redis.url, '--secret', WEBHOOK_SECRET);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/--secret is for http\(s\) destinations/);
    const rate = await destinations('add', '--db', db, '--url', redis.url, '--rate', '5/s');
    expect(rate.code).toBe(2);
    expect(rate.stderr).toMatch(/--rate is for http\(s\) destinations/);
    expect(secret.stderr + rate.stderr).not.toContain(PASSWORD);
  });

  it('serve appends the changes of the events it receives, under <seq>-0, in seq order', async () => {
    const db = `${tmp.dir}/serve.db`;
    const serve = await startServe(['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET]);
    const reader = createClient({ url: redis.url });
    await reader.connect();
    try {
      const added = await destinations('add', '--db', db, '--url', redis.url, '--stream', 'serve:changes', '--filter', 'entity=candidate');
      expect(added.code, added.stderr).toBe(0);
      for (const id of ['cand-r1', 'cand-r2', 'cand-r3']) {
        const event = sampleEvent('candidate.added', { data: { candidate_id: id } });
        expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      }
      const entries = async () => (await reader.xRange('serve:changes', '-', '+')) ?? [];
      await waitFor(async () => (await entries()).length === 3, 10_000, 'three entries');
      const read = await entries();
      expect([...read.map((e) => e.message.id)].sort()).toEqual(['cand-r1', 'cand-r2', 'cand-r3']);
      const seqs = read.map((e) => (JSON.parse(e.message.change!) as { seq: number }).seq);
      expect(read.map((e) => e.id)).toEqual(seqs.map((seq) => `${seq}-0`));
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(serve.stdout() + serve.stderr()).not.toContain(PASSWORD);
    } finally {
      await reader.close();
      expect(await serve.stop('SIGTERM')).toBe(0);
    }
  });

  it('a serve killed mid-way (SIGKILL): the next one appends the rest, none twice, in order', async () => {
    const db = `${tmp.dir}/killed.db`;
    const serveArgs = ['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET];
    let serve = await startServe(serveArgs);
    const reader = createClient({ url: redis.url });
    await reader.connect();
    const entries = async () => (await reader.xRange('killed:changes', '-', '+')) ?? [];
    try {
      const added = await destinations('add', '--db', db, '--url', redis.url, '--stream', 'killed:changes', '--filter', 'entity=candidate');
      expect(added.code, added.stderr).toBe(0);
      const ids = Array.from({ length: 12 }, (_, i) => `cand-k${i + 1}`);
      for (const id of ids) {
        const event = sampleEvent('candidate.added', { data: { candidate_id: id } });
        expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      }
      // Killed wherever it is: before, during or after its appends.
      serve.child.kill('SIGKILL');
      await new Promise((resolve) => serve.child.once('exit', resolve));
      serve = await startServe(serveArgs);
      // The killed process's lease ends within 10 s; then the rest goes.
      await waitFor(async () => (await entries()).length === ids.length, 25_000, 'every change appended');
      const read = await entries();
      // The projection's order (seq) is the stream's; the ids, each once.
      expect([...read.map((e) => e.message.id)].sort()).toEqual([...ids].sort());
      const seqs = read.map((e) => (JSON.parse(e.message.change!) as { seq: number }).seq);
      expect(read.map((e) => e.id)).toEqual(seqs.map((seq) => `${seq}-0`));
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    } finally {
      await reader.close();
      await serve.stop('SIGTERM');
    }
  });
});
