// `prequal-hooks destinations` and serve's delivery, as an integrator runs them: the real process on
// a real SQLite file, a receiver on loopback that verifies the Standard Webhooks signature. What
// add and list print (never a secret after add, never a URL's password), the errors of a wrong
// call (which change nothing), a destination added while serve runs taking effect, a failing
// receiver's change set aside as dead and retried from the CLI.
import { createHmac } from 'node:crypto';
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent } from '../../src/testing/samples.js';
import { sendSigned } from '../../src/testing/signed-request.js';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { listen, tempDir } from '../support/servers.js';
import { sqlOn } from '../support/sql.js';
import { waitFor } from '../support/wait-for.js';

const PASSWORD = 'dst-Pa55word-in-url-4e1f';
const WEBHOOK_SECRET = 'whsec_cli-destinations-serve-secret-0a9c';

const tmp = tempDir('prequal-hooks-destinations-');
afterAll(() => {
  killChildren();
  tmp.cleanup();
});

const destinations = (...args: string[]) => runCliProcess(['destinations', ...args]);

interface Delivery {
  verified: boolean;
  body: { seq: number; entity: string; id: string; op: string; account: string };
  status: number;
  authorization: string | undefined;
}

describe('prequal-hooks destinations', () => {
  const db = tmp.dbPath;

  it('adds a destination with a generated whsec_ secret printed once, masks the URL password, lists it', async () => {
    expect((await runCliProcess(['migrate', '--db', db])).code).toBe(0);
    const added = await destinations(
      'add',
      '--db',
      db,
      '--url',
      `https://hooks:${PASSWORD}@example.com/in`,
      '--filter',
      'entity=candidate',
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const body = JSON.parse(added.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({ account: 'default', url: 'https://***@example.com/in', state: 'active', filter: { entity: 'candidate' } });
    expect(body.destination).toMatch(/^dst_[a-z2-7]{12}$/);
    expect(Buffer.from(String(body.secret).replace(/^whsec_/, ''), 'base64')).toHaveLength(32);
    expect(added.stdout + added.stderr).not.toContain(PASSWORD);
    expect(statSync(`${db}.accounts-key`).mode & 0o777).toBe(0o600);
    const listed = await destinations('list', '--db', db, '--json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(PASSWORD);
    expect(listed.stdout).not.toContain(String(body.secret));
    const [one] = (JSON.parse(listed.stdout) as { destinations: Array<Record<string, unknown>> }).destinations;
    expect(one).toMatchObject({ destination: body.destination, url: 'https://***@example.com/in', state: 'active', lag: 0, dead: 0 });
    expect(one).not.toHaveProperty('secret');
    const table = await destinations('list', '--db', db, '--table');
    expect(table.stdout).toContain(String(body.destination));
    expect(table.stdout).not.toContain(PASSWORD);
  });

  it('refuses a wrong call with a clear error, and changes nothing', async () => {
    const before = (await destinations('list', '--db', db, '--json')).stdout;
    const cases: Array<[string[], number, RegExp]> = [
      [['--url', `ftp://u:${PASSWORD}@example.com`], 2, /must be http:\/\/, https:\/\/, redis:\/\/, rediss:\/\/, nats:\/\/ or tls:\/\//],
      [['--url', `redis://:${PASSWORD}@127.0.0.1:6379`, '--secret', WEBHOOK_SECRET], 2, /--secret is for http\(s\) destinations/],
      [['--url', 'https://example.com', '--stream', 'changes'], 2, /--stream is for redis:\/\//],
      [['--url', 'https://example.com', '--filter', 'score=7'], 2, /unknown field "score"/],
      [['--url', 'https://example.com', '--rate', 'fast'], 2, /--rate must be/],
      [['--url', 'https://example.com', '--retry-schedule', '5,10'], 2, /--retry-schedule must be/],
      [['--url', 'https://example.com', '--secret', 'short'], 2, /a destination secret is whsec_ and base64/],
      [['--url', 'https://example.com', '--secret', 'whsec_c2hvcnQ='], 2, /shorter than 16 bytes/],
      [[], 2, /--url is required/],
      [['--url', 'https://example.com', '--account', 'nobody'], 1, /has no account "nobody"/],
      [['--url', 'https://example.com', '--after', 'last'], 2, /--after must be a change's seq/],
      [['--url', 'https://example.com', '--after', '99'], 2, /--after must be a seq from 0 to the account's last, 0/],
      [
        ['--url', `redis://:${PASSWORD}@127.0.0.1:6379`, '--operational'],
        2,
        /an operational destination is http\(s\):\/\/ and takes no filter/,
      ],
    ];
    for (const [args, code, message] of cases) {
      const result = await destinations('add', '--db', db, ...args);
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain(PASSWORD);
    }
    const unknown = await destinations('disable', '--db', db, '--destination', 'dst_nosuchone');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no destination "dst_nosuchone"/);
    const retry = await destinations('retry', '--db', db);
    expect(retry.code).toBe(2);
    expect(retry.stderr).toMatch(/--destination <id>.*or --all/);
    expect((await destinations('list', '--db', db, '--json')).stdout).toBe(before);
  });

  it('adds an operational destination (--operational without --filter), and refuses one given a filter', async () => {
    const url = 'https://ops.example.com/events';
    const added = await destinations('add', '--db', db, '--url', url, '--operational', '--json');
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ url, kind: 'operational' });
    const filtered = await destinations('add', '--db', db, '--url', url, '--operational', '--filter', 'entity=candidate');
    expect(filtered.code).toBe(2);
    expect(filtered.stderr).toMatch(/an operational destination is http\(s\):\/\/ and takes no filter/);
  });
});

describe('serve delivers to destinations', () => {
  const dir = tempDir('prequal-hooks-destinations-serve-');
  afterAll(() => dir.cleanup());

  it('takes a destination added while it runs, signs each change, sets a failing one aside as dead, and retry sends it again', async () => {
    const received: Delivery[] = [];
    let secret = '';
    let status = 200;
    const target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      for await (const chunk of req) raw += String(chunk);
      const [id, timestamp] = [String(req.headers['webhook-id']), String(req.headers['webhook-timestamp'])];
      const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
        .update(`${id}.${timestamp}.${raw}`)
        .digest('base64');
      const verified = String(req.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
      received.push({ verified, body: JSON.parse(raw) as Delivery['body'], status, authorization: req.headers.authorization });
      res.writeHead(status).end();
    });
    const serve = await startServe(['--db', dir.dbPath, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET]);
    try {
      const added = await destinations(
        'add',
        ...['--db', dir.dbPath, '--url', `${target.url.replace('http://', `http://hooks:${PASSWORD}@`)}/in`],
        ...['--filter', 'entity=candidate', '--retry-schedule', '0s,100ms,200ms', '--json'],
      );
      expect(added.code, added.stderr).toBe(0);
      const { destination, secret: generated } = JSON.parse(added.stdout) as { destination: string; secret: string };
      secret = generated;
      // The loop reads the destinations afresh each round: no restart.
      const event = sampleEvent('candidate.added', { data: { candidate_id: 'cand-e2e-1' } });
      expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      await waitFor(() => received.length === 1, 5000, 'the change delivered');
      expect(received[0]).toMatchObject({
        verified: true,
        body: { account: 'default', entity: 'candidate', id: 'cand-e2e-1', op: 'upsert' },
      });
      expect(received[0]!.authorization).toBe(`Basic ${Buffer.from(`hooks:${PASSWORD}`).toString('base64')}`);

      status = 500;
      const next = sampleEvent('candidate.interview.started', { data: { candidate_id: 'cand-e2e-1' } });
      expect((await sendSigned(serve.webhookUrl, next, { secret: WEBHOOK_SECRET })).status).toBe(200);
      const dead = await waitFor(
        async () => {
          const listed = JSON.parse((await destinations('list', '--db', dir.dbPath, '--json')).stdout) as {
            destinations: Array<{ dead: number }>;
          };
          return listed.destinations[0]!.dead === 1;
        },
        10_000,
        'the failing change set aside',
      );
      expect(dead).toBe(true);
      expect(received.filter((r) => r.status === 500)).toHaveLength(3);
      const seq = received.at(-1)!.body.seq;

      const shown = await destinations('list', '--db', dir.dbPath, '--destination', destination, '--json');
      const [listed] = (JSON.parse(shown.stdout) as { destinations: Array<{ deadDeliveries: unknown[] }> }).destinations;
      expect(listed!.deadDeliveries).toEqual([
        expect.objectContaining({
          seq,
          entity: 'candidate',
          entity_id: 'cand-e2e-1',
          attempts: 3,
          last_status: 500,
          last_error: 'answered 500',
        }),
      ]);

      status = 200;
      const retried = await destinations('retry', '--db', dir.dbPath, '--destination', destination, '--change', String(seq), '--json');
      expect(retried.code, retried.stderr).toBe(0);
      expect(JSON.parse(retried.stdout)).toEqual({ retried: 1 });
      await waitFor(() => received.some((r) => r.body.seq === seq && r.status === 200), 5000, 'the dead change delivered');
      // Sent again on request: every change after 0, once more.
      const before = received.length;
      const replayed = await destinations('replay', '--db', dir.dbPath, '--destination', destination, '--after', '0', '--json');
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(JSON.parse(replayed.stdout)).toEqual({ queued: 2 });
      await waitFor(() => received.length === before + 2, 5000, 'the two changes sent again');
      expect(received.slice(before).map((r) => r.body.seq)).toEqual([received[0]!.body.seq, seq]);
      expect(received.every((r) => r.verified)).toBe(true);
      expect(serve.stdout() + serve.stderr()).not.toContain(PASSWORD);
      expect(serve.stdout()).toContain('set aside (dead)');
    } finally {
      expect(await serve.stop('SIGTERM')).toBe(0);
      await target.close();
    }
  });

  it('keeps what is queued through a SIGKILL: the next serve sends it, with the same webhook-id', async () => {
    const db = `${dir.dir}/killed.db`;
    const ids: string[] = [];
    let status = 503;
    const target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req) void _;
      ids.push(String(req.headers['webhook-id']));
      res.writeHead(status).end();
    });
    const serveArgs = ['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET];
    let serve = await startServe(serveArgs);
    try {
      const added = await destinations(
        'add',
        '--db',
        db,
        '--url',
        `${target.url}/in`,
        '--filter',
        'entity=candidate',
        '--retry-schedule',
        '0s,1s',
      );
      expect(added.code, added.stderr).toBe(0);
      const event = sampleEvent('candidate.added', { data: { candidate_id: 'cand-killed' } });
      expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      await waitFor(() => ids.length === 1, 5000, 'the first attempt');
      serve.child.kill('SIGKILL');
      await new Promise((resolve) => serve.child.once('exit', resolve));
      status = 200;
      serve = await startServe(serveArgs);
      // The killed process's lease ends within 10 s; then the queued change goes.
      await waitFor(() => ids.length === 2, 20_000, 'the change sent by the next serve');
      expect(ids[1]).toBe(ids[0]);
    } finally {
      await serve.stop('SIGTERM');
      await target.close();
    }
  });

  it('on SIGTERM waits for a delivery in flight, and settles it before exiting', async () => {
    const db = `${dir.dir}/stopping.db`;
    let release: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (release = resolve));
    let requests = 0;
    const target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req) void _;
      requests += 1;
      await answered;
      res.writeHead(200).end();
    });
    const serve = await startServe(['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET]);
    try {
      const added = await destinations('add', '--db', db, '--url', `${target.url}/in`, '--filter', 'entity=candidate');
      expect(added.code, added.stderr).toBe(0);
      const event = sampleEvent('candidate.added', { data: { candidate_id: 'cand-stopping' } });
      expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      await waitFor(() => requests === 1, 5000, 'the delivery in flight');
      const stopped = serve.stop('SIGTERM');
      await waitFor(() => serve.stdout().includes('stopping'), 5000, 'serve stopping');
      release();
      expect(await stopped).toBe(0);
      const listed = JSON.parse((await destinations('list', '--db', db, '--json')).stdout) as { destinations: Array<{ lag: number }> };
      expect(listed.destinations[0]!.lag).toBe(0);
      expect(requests).toBe(1);
    } finally {
      release();
      await target.close();
    }
  });

  it('connects nowhere its network policy denies: PREQUAL_HOOKS_DESTINATIONS_DENY, a name resolving there, the failure saying why', async () => {
    const db = `${dir.dir}/denied.db`;
    let requests = 0;
    const target = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req) void _;
      requests += 1;
      res.writeHead(200).end();
    });
    const serve = await startServe(['--db', db, '--port', '0', '--host', '127.0.0.1', '--secret', WEBHOOK_SECRET], {
      PREQUAL_HOOKS_DESTINATIONS_DENY: '127.0.0.0/8',
    });
    try {
      const url = `http://localhost:${new URL(target.url).port}/in`;
      const added = await destinations(
        'add',
        '--db',
        db,
        '--url',
        url,
        '--filter',
        'entity=candidate',
        '--retry-schedule',
        '0s,1h',
        '--json',
      );
      expect(added.code, added.stderr).toBe(0);
      const { destination } = JSON.parse(added.stdout) as { destination: string };
      const event = sampleEvent('candidate.added', { data: { candidate_id: 'cand-denied' } });
      expect((await sendSigned(serve.webhookUrl, event, { secret: WEBHOOK_SECRET })).status).toBe(200);
      await waitFor(() => serve.stdout().includes('refused by the network policy'), 5000, 'the refusal logged');
      expect(serve.stdout()).toContain('localhost resolves to 127.0.0.1, which is in 127.0.0.0/8, a range denied to destinations');
      const [failed] = await sqlOn(db).query<{ last_error: string }>(
        'SELECT last_error FROM destination_deliveries WHERE destination = ?',
        [destination],
      );
      expect(failed!.last_error).toMatch(/^refused by the network policy: localhost resolves to 127\.0\.0\.1/);
      expect(requests).toBe(0);
    } finally {
      expect(await serve.stop('SIGTERM')).toBe(0);
      await target.close();
    }
  });
});
