// The real sandbox delivers to the real serve; serve is stopped long enough for deliveries to be
// given up. Then `prequal-hooks reconcile` repairs the projection from the sandbox's API, a second
// run repairs nothing, and webhooks after it apply by the last-writer-wins rule.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sendSigned } from '../../src/testing/signed-request.js';
import { CLI, cliEnv, killChildren, readDb, runCliProcess, startSandbox, startServe, type ServeProcess } from '../support/cli-process.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { openStore } from '../../src/store/open.js';
import { apiClient, JOB, person, untilIdle as untilSandboxIdle } from '../support/sandbox-api.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';
import { received } from '../support/bodies.js';

const SECRET = 'whsec_reconcile_e2e_51ad9e';
const KEY = `agency_live_${'R3cnc'.repeat(8)}`;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Deliveries here include given-up retries: more time than the sandbox test's default.
const untilIdle = (baseUrl: string) => untilSandboxIdle(baseUrl, 30_000);

// Every field of the service's list (reconcile repairs each of them).
const FIELDS = [
  'candidate_id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'status',
  'interview_score',
  'availability',
  'salary_expectation',
  'candidate_alignment',
  'strengths',
  'concerns',
] as const;
const comparable = (c: Record<string, unknown>) => ({
  ...Object.fromEntries(FIELDS.map((f) => [f, c[f] ?? null])),
  interview_date: c.interview_date == null ? null : new Date(c.interview_date as string).toISOString(),
  is_sourced: Boolean(c.is_sourced),
});
const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.candidate_id).localeCompare(String(b.candidate_id));

describe('prequal-hooks reconcile', () => {
  const tmp = tempDir('prequal-hooks-reconcile-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('repairs what a stopped receiver missed; a second run repairs nothing; later webhooks follow the rule', async () => {
    const dbPath = join(tmp.dir, 'hooks.db');
    const port = String(await freePort());
    const serveArgs = ['--host', '127.0.0.1', '--port', port, '--db', dbPath, '--secret', SECRET];
    let serve: ServeProcess = await startServe(serveArgs);
    const sandbox = await startSandbox([
      '--port',
      '0',
      '--api-key',
      KEY,
      '--seed',
      'reconcile-1',
      '--credits',
      '40',
      '--interview-ms',
      '300',
      '--webhook-url',
      serve.webhookUrl,
      '--webhook-secret',
      SECRET,
      '--retry-base-ms',
      '50',
    ]);
    const call = apiClient(sandbox.apiUrl, KEY);
    const env = { PREQUAL_HOOKS_API_KEY: KEY };
    const reconcile = (...args: string[]) =>
      runCliProcess(['reconcile', '--db', dbPath, '--api-url', sandbox.baseUrl, ...args], { env, timeoutMs: 30_000 });

    const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id as string;
    expect((await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 6 }, (_, i) => person(i)) })).status).toBe(
      201,
    );
    await untilIdle(sandbox.baseUrl);
    await waitFor(
      () =>
        readDb(dbPath, (db) => db.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined,
      10_000,
      'projection',
    );

    // The receiver is down while candidates are added, interviewed and the campaign paused:
    // every delivery of that time exhausts its retries.
    expect(await serve.stop()).toBe(0);
    expect(
      (await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 8 }, (_, i) => person(10 + i)) })).status,
    ).toBe(201);
    expect(
      (
        await call('POST', `/campaigns/${id}/candidates`, {
          contact_mode: 'sms',
          candidates: Array.from({ length: 3 }, (_, i) => person(30 + i)),
        })
      ).status,
    ).toBe(201);
    await untilIdle(sandbox.baseUrl);
    expect((await call('PATCH', `/campaigns/${id}/status`, { status: 'paused' })).status).toBe(200);
    const { attempts } = await untilIdle(sandbox.baseUrl);
    expect(attempts.filter((a) => a.outcome === 'failed').length).toBeGreaterThan(10);
    serve = await startServe(serveArgs);

    const projectedRows = () =>
      readDb(dbPath, (db) => db.prepare('SELECT * FROM candidates WHERE campaign_id = ?').all(id)) as Array<Record<string, unknown>>;
    const before = projectedRows().length;
    expect(before).toBe(6);

    // A dry run says what differs and writes nothing; names and e-mails are never printed.
    const dry = await reconcile('--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const dryReport = JSON.parse(dry.stdout);
    expect(dryReport.dryRun).toBe(true);
    expect(dryReport.written).toBe(0);
    expect(dryReport.repairs.filter((r: { missing: boolean; table: string }) => r.table === 'candidates' && r.missing)).toHaveLength(11);
    expect(dry.stdout).not.toContain('Prénom1');
    expect(dry.stdout).not.toContain('@exemple.fr');
    expect(projectedRows()).toHaveLength(6);

    const run = await reconcile();
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/campaign .*: 17 candidates read, 11 missing/);
    expect(run.stdout).toMatch(/repaired \d+ rows \(\d+ reconcile events written\)/);
    expect(run.stdout).not.toMatch(/Prénom|Nom\d|exemple\.fr|06\d{8}/);

    // The projection now equals the service: every candidate, the stats, the status, the credits.
    const listed = (await call('GET', `/campaigns/${id}/candidates?per_page=100`)).body;
    expect(listed.pagination.total).toBe(17);
    expect(projectedRows().map(comparable).sort(byId)).toEqual(listed.candidates.map(comparable).sort(byId));
    const status = (await call('GET', `/campaigns/${id}/status`)).body;
    const state = JSON.parse((await runCliProcess(['inspect', '--db', dbPath, '--json'])).stdout);
    expect(state.campaigns[0]).toMatchObject({ campaign_id: id, status: 'paused', stats: status.stats });
    const credits = (await call('GET', '/account/credits')).body;
    expect(state.credits.credits_remaining).toBe(credits.credits_available);
    const kinds = readDb(dbPath, (db) =>
      db.prepare("SELECT kind, COUNT(*) AS n FROM inbox WHERE kind LIKE 'reconcile.%' GROUP BY kind ORDER BY kind").all(),
    );
    expect(kinds).toEqual([
      { kind: 'reconcile.campaign', n: 1 },
      { kind: 'reconcile.candidate', n: expect.any(Number) },
      { kind: 'reconcile.credits', n: 1 },
    ]);

    // A second run finds nothing.
    const again = await reconcile('--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ repairs: [], written: 0, resumed: false });

    // A webhook older than the reading does not undo a repair; a newer one wins.
    const report = JSON.parse(dry.stdout) as {
      repairs: Array<{ table: string; key: string; readAt: string; fields: Record<string, { service: unknown }> }>;
    };
    const repaired = report.repairs.find((r) => r.table === 'candidates' && r.fields.status?.service === 'completed')!;
    expect(repaired).toBeDefined();
    const wrote = JSON.parse((await reconcile('--json', '--dry-run')).stdout);
    expect(wrote.repairs).toEqual([]);
    const readAt = readDb(dbPath, (db) =>
      (db.prepare("SELECT raw, codec FROM inbox WHERE kind = 'reconcile.candidate'").all() as Array<{ raw: Buffer; codec: number | null }>)
        .map((row) => JSON.parse(received(row).toString('utf8')) as { timestamp: string; data: { candidate_id: string } })
        .find((event) => event.data.candidate_id === repaired.key),
    )!.timestamp;
    const failed = (timestamp: string) => ({
      event: 'candidate.interview.failed',
      timestamp,
      data: { campaign_id: id, candidate_id: repaired.key, failure_reason: 'no_answer' },
    });
    const statusOf = () =>
      readDb(dbPath, (db) => db.prepare('SELECT status FROM candidates WHERE candidate_id = ?').pluck().get(repaired.key));
    expect((await sendSigned(serve.webhookUrl, failed(new Date(Date.parse(readAt) - 1000).toISOString()), { secret: SECRET })).status).toBe(
      200,
    );
    await waitFor(
      () =>
        readDb(dbPath, (db) => db.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined,
      10_000,
      'projection',
    );
    expect(statusOf()).toBe('completed');
    expect((await sendSigned(serve.webhookUrl, failed(new Date(Date.parse(readAt) + 1000).toISOString()), { secret: SECRET })).status).toBe(
      200,
    );
    await waitFor(() => (statusOf() === 'incomplete' ? true : undefined), 10_000, 'the newer webhook to win');

    // The sandbox's own webhooks after the reconcile apply as usual.
    expect((await call('POST', `/campaigns/${id}/candidates`, { candidates: [person(60)] })).status).toBe(201);
    await untilIdle(sandbox.baseUrl);
    await waitFor(() => (projectedRows().length === 18 ? true : undefined), 10_000, 'the new candidate');

    expect(await sandbox.stop()).toBe(0);
    expect(await serve.stop()).toBe(0);
  }, 90_000);

  it('serve --reconcile-every repairs on a schedule, off the request path, and stops cleanly', async () => {
    const dbPath = join(tmp.dir, 'scheduled.db');
    const port = String(await freePort());
    // Only campaign.created is delivered: the candidates reach the projection through the schedule.
    const sandbox = await startSandbox([
      '--port',
      '0',
      '--api-key',
      KEY,
      '--seed',
      'reconcile-2',
      '--interview-ms',
      '100',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks`,
      '--webhook-secret',
      SECRET,
      '--events',
      'campaign.created',
    ]);
    const bad = await runCliProcess(['serve', '--db', dbPath, '--reconcile-every', '5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--reconcile-every needs the service address');
    const serve = await startServe(
      ['--host', '127.0.0.1', '--port', port, '--db', dbPath, '--secret', SECRET, '--reconcile-every', '0.05', '--api-url', sandbox.apiUrl],
      { PREQUAL_HOOKS_API_KEY: KEY },
    );
    const call = apiClient(sandbox.apiUrl, KEY);
    const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id as string;
    expect(
      (await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 4 }, (_, i) => person(70 + i)) })).status,
    ).toBe(201);
    await untilIdle(sandbox.baseUrl);
    const count = () =>
      readDb(dbPath, (db) => db.prepare('SELECT COUNT(*) FROM candidates WHERE campaign_id = ?').pluck().get(id)) as number;
    await waitFor(() => (count() === 4 ? true : undefined), 20_000, 'the scheduled reconcile');
    await waitFor(
      () => (serve.logLines().some((l) => l.msg === 'reconcile: nothing to repair') ? true : undefined),
      20_000,
      'a second, idle run',
    );
    const repaired = serve.logLines().find((l) => typeof l.msg === 'string' && /reconcile: \d+ rows repaired/.test(l.msg))!;
    expect(repaired).toMatchObject({ written: expect.any(Number), campaigns: 1 });
    expect(serve.stdout()).not.toMatch(/Prénom|exemple\.fr|06\d{8}|R3cnc/);
    expect(await serve.stop()).toBe(0);
    expect(await sandbox.stop()).toBe(0);
  }, 60_000);

  it('serve --reconcile-every reconciles each account that has an API key with its own key, into its own rows', async () => {
    const dbPath = join(tmp.dir, 'accounts-scheduled.db');
    const port = String(await freePort());
    const sandbox = await startSandbox([
      '--port',
      '0',
      '--api-key',
      KEY,
      '--seed',
      'reconcile-accounts',
      '--interview-ms',
      '100',
      '--webhook-url',
      `http://127.0.0.1:${port}/webhooks`,
      '--webhook-secret',
      SECRET,
      '--events',
      'campaign.created',
    ]);
    // The branch's webhooks never come: its rows can only come from its own reconciliation.
    const keyFile = join(tmp.dir, 'branch-api-key');
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    const added = await runCliProcess([
      'accounts',
      'add',
      '--db',
      dbPath,
      '--account',
      'branch',
      '--secret',
      'whsec_branch_1f9c2a7d',
      '--api-key-file',
      keyFile,
      '--json',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const { webhookPath } = JSON.parse(added.stdout) as { webhookPath: string };
    const serve = await startServe(
      ['--host', '127.0.0.1', '--port', port, '--db', dbPath, '--secret', SECRET, '--reconcile-every', '0.05', '--api-url', sandbox.apiUrl],
      { PREQUAL_HOOKS_API_KEY: KEY },
    );
    const call = apiClient(sandbox.apiUrl, KEY);
    const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id as string;
    expect(
      (await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 3 }, (_, i) => person(80 + i)) })).status,
    ).toBe(201);
    await untilIdle(sandbox.baseUrl);
    // Reconciliation repairs the campaigns an account knows: the branch hears of this one by its own path.
    const created = received(
      readDb(dbPath, (db) => db.prepare("SELECT raw, codec FROM inbox WHERE kind = 'campaign.created'").get()) as {
        raw: Buffer;
        codec: number | null;
      },
    );
    expect(
      (await sendSigned(`http://127.0.0.1:${port}${webhookPath}`, created.toString('utf8'), { secret: 'whsec_branch_1f9c2a7d' })).status,
    ).toBe(200);
    const count = (account: string) =>
      readDb(dbPath, (db) =>
        db.prepare('SELECT COUNT(*) FROM candidates WHERE account = ? AND campaign_id = ?').pluck().get(account, id),
      ) as number;
    await waitFor(() => (count('branch') === 3 && count('default') === 3 ? true : undefined), 30_000, 'both accounts reconciled');
    // Its log line, held in the log's batch for up to a second after the rows are in.
    await waitFor(
      () => serve.logLines().find((l) => l.account === 'branch' && typeof l.msg === 'string' && l.msg.startsWith('reconcile')),
      5000,
      "the branch's reconcile line",
    );
    expect(serve.stdout() + serve.stderr()).not.toContain(KEY);
    expect(await serve.stop()).toBe(0);
    expect(await sandbox.stop()).toBe(0);
  }, 60_000);

  it('serve --reconcile-every re-reads --api-key-file at SIGHUP: the next run takes the new key', async () => {
    const sandbox = await createSandbox({ apiKeys: [KEY], seed: 'reconcile-key-file', interviewMs: 600_000, log: () => {} });
    const revoked = `agency_live_${'Rv0kd'.repeat(8)}`;
    const keyFile = join(tmp.dir, 'api-key.txt');
    writeFileSync(keyFile, `${revoked}\n`, { mode: 0o600 });
    const dbPath = join(tmp.dir, 'key-file.db');
    const serve = await startServe([
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--db',
      dbPath,
      '--secret',
      SECRET,
      '--reconcile-every',
      '0.05',
      '--api-url',
      sandbox.url,
      '--api-key-file',
      keyFile,
    ]);
    try {
      const failed = await waitFor(
        () => serve.logLines().find((l) => l.msg === 'reconcile failed; it runs again at the next turn'),
        20_000,
        'a run with the revoked key',
      );
      expect(failed).toMatchObject({ status: 401, code: 'INVALID_API_KEY' });

      writeFileSync(keyFile, `${KEY}\n`);
      serve.child.kill('SIGHUP');
      const reread = await waitFor(
        () => serve.logLines().find((l) => String(l.msg).startsWith('SIGHUP: API key re-read')),
        5000,
        'the key re-read',
      );
      expect(reread.msg).toBe(`SIGHUP: API key re-read from ${keyFile}; reconciliation uses it from its next run`);
      const credits = () => readDb(dbPath, (db) => db.prepare('SELECT credits_remaining FROM credits').pluck().get()) as number | undefined;
      await waitFor(() => credits(), 20_000, 'a run with the new key');
      expect(credits()).toBe((await apiClient(sandbox.apiUrl, KEY)('GET', '/account/credits')).body.credits_available);
      expect(await serve.stop()).toBe(0);
      expect(serve.stdout() + serve.stderr()).not.toMatch(/R3cnc|Rv0kd/);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('reconcile and serve --reconcile-every refuse a redirect to another origin: the key never reaches it', async () => {
    // The service's address answers a redirect to another port of 127.0.0.1 (another origin),
    // which records every request and would answer as the service does.
    const thiefHeard: Array<string | undefined> = [];
    const thief = createHttpServer((req, res) => {
      thiefHeard.push(req.headers['x-api-key'] as string | undefined);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          credits_available: 999_999,
          credits_used_this_month: 0,
          subscription_type: 'enterprise',
          reset_date: '2026-12-01',
        }),
      );
    });
    const redirects: number[] = [];
    let status = 307;
    const front = createHttpServer((req, res) => {
      redirects.push(status);
      res.writeHead(status, { location: `${thiefUrl}${req.url}` });
      res.end();
    });
    await new Promise<void>((resolve) => thief.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const thiefUrl = `http://127.0.0.1:${(thief.address() as { port: number }).port}`;
    const frontUrl = `http://127.0.0.1:${(front.address() as { port: number }).port}`;
    try {
      const redirectedDb = join(tmp.dir, 'redirected.db');
      await (await openStore(redirectedDb)).close();
      const run = await runCliProcess(['reconcile', '--db', redirectedDb, '--api-url', frontUrl, '--campaign', 'cmp_redirected'], {
        env: { PREQUAL_HOOKS_API_KEY: KEY },
        timeoutMs: 30_000,
      });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(
        `${frontUrl}/api/v1/campaigns/cmp_redirected/status answered 307, a redirect to another origin than ${frontUrl} (${thiefUrl}/api/v1/campaigns/cmp_redirected/status)`,
      );
      expect(run.stderr).toContain('the API key was not sent there');
      expect(run.stderr).not.toContain('PREQUAL_HOOKS_DEBUG');
      expect(run.stderr + run.stdout).not.toContain(KEY);
      expect(redirects).toEqual([307]);

      status = 302;
      const port = String(await freePort());
      const serve = await startServe(
        [
          '--host',
          '127.0.0.1',
          '--port',
          port,
          '--db',
          join(tmp.dir, 'redirected-serve.db'),
          '--secret',
          SECRET,
          '--reconcile-every',
          '0.05',
          '--api-url',
          frontUrl,
        ],
        { PREQUAL_HOOKS_API_KEY: KEY },
      );
      const failed = await waitFor(
        () => serve.logLines().find((l) => l.msg === 'reconcile failed; it runs again at the next turn'),
        20_000,
        'the scheduled reconcile to fail',
      );
      expect(failed).toMatchObject({ status: 302, message: expect.stringContaining(`a redirect to another origin than ${frontUrl}`) });
      expect(serve.stdout() + serve.stderr()).not.toContain(KEY);
      expect(await serve.stop()).toBe(0);
      expect(redirects.length).toBeGreaterThanOrEqual(2);
      expect(thiefHeard).toEqual([]);
    } finally {
      await new Promise((resolve) => front.close(resolve));
      await new Promise((resolve) => thief.close(resolve));
    }
  }, 60_000);

  it('reconcile builds the state from the service alone: a database that does not exist is created (a dry run creates none)', async () => {
    const sandbox = await createSandbox({ apiKeys: [KEY], seed: 'reconcile-4', interviewMs: 600_000, log: () => {} });
    try {
      const call = apiClient(sandbox.apiUrl, KEY);
      const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id as string;
      expect(
        (await call('POST', `/campaigns/${id}/candidates`, { candidates: Array.from({ length: 3 }, (_, i) => person(90 + i)) })).status,
      ).toBe(201);
      const env = { PREQUAL_HOOKS_API_KEY: KEY };

      const dryPath = join(tmp.dir, 'dry', 'nothing.db');
      const dry = await runCliProcess(['reconcile', '--db', dryPath, '--api-url', sandbox.url, '--campaign', id, '--dry-run', '--json'], {
        env,
        timeoutMs: 30_000,
      });
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).toContain(`no database at ${dryPath}; comparing with an empty one (a dry run creates nothing)`);
      expect(
        JSON.parse(dry.stdout).repairs.filter((r: { table: string; missing: boolean }) => r.table === 'candidates' && r.missing),
      ).toHaveLength(3);
      expect(existsSync(dryPath)).toBe(false);

      const dbPath = join(tmp.dir, 'fresh', 'from-the-service.db');
      const run = await runCliProcess(['reconcile', '--db', dbPath, '--api-url', sandbox.url, '--campaign', id], {
        env,
        timeoutMs: 30_000,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`prequal-hooks reconcile: no database at ${dbPath}; creating it\n`);
      expect(run.stdout).toMatch(/3 candidates read, 3 missing/);
      expect(readDb(dbPath, (db) => db.prepare('SELECT COUNT(*) FROM candidates WHERE campaign_id = ?').pluck().get(id))).toBe(3);
      expect(readDb(dbPath, (db) => db.prepare('SELECT status FROM campaigns WHERE campaign_id = ?').pluck().get(id))).toBe('active');
      expect(readDb(dbPath, (db) => db.prepare('SELECT credits_remaining FROM credits').pluck().get())).toBe(
        (await call('GET', '/account/credits')).body.credits_available,
      );

      // The database exists now: the next run says nothing about creating it, and finds nothing to
      // repair; its key comes from a file, as serve's can (--api-key-file).
      const keyFile = join(tmp.dir, 'api-key');
      writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
      const again = await runCliProcess(['reconcile', '--db', dbPath, '--api-url', sandbox.url, '--api-key-file', keyFile], {
        timeoutMs: 30_000,
      });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain('no database');
      expect(again.stdout).toContain('nothing to repair');
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('plain http to another host than this machine is refused unless --allow-insecure-api-url (or its variable) says so', async () => {
    const sandbox = await createSandbox({ apiKeys: [KEY], seed: 'reconcile-5', interviewMs: 600_000, log: () => {} });
    try {
      // 0.0.0.0 reaches this machine on Linux but is not a loopback address: it stands for a
      // host on the network here.
      const elsewhere = `http://0.0.0.0:${new URL(sandbox.url).port}`;
      const env = { PREQUAL_HOOKS_API_KEY: KEY };
      const args = ['reconcile', '--db', join(tmp.dir, 'insecure.db'), '--api-url', elsewhere, '--dry-run'];
      const refused = await runCliProcess(args, { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`--api-url ${elsewhere} is plain http: the API key would cross the network readable`);
      expect(refused.stderr).toContain('--allow-insecure-api-url (or PREQUAL_HOOKS_ALLOW_INSECURE_API_URL=1)');
      const serveRefused = await runCliProcess(
        ['serve', '--db', join(tmp.dir, 'insecure-serve.db'), '--reconcile-every', '5', '--api-url', elsewhere],
        { env },
      );
      expect(serveRefused.code).toBe(2);
      expect(serveRefused.stderr).toContain('is plain http');

      const [flag, variable] = await Promise.all([
        runCliProcess([...args, '--allow-insecure-api-url'], { env, timeoutMs: 30_000 }),
        runCliProcess(args, { env: { ...env, PREQUAL_HOOKS_ALLOW_INSECURE_API_URL: '1' }, timeoutMs: 30_000 }),
      ]);
      expect(flag.code, flag.stderr).toBe(0);
      expect(variable.code, variable.stderr).toBe(0);
      expect(flag.stdout).toContain('nothing written');
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('Ctrl-C stops after the campaign being read (exit 130), and the next run goes on from there', async () => {
    const sandbox = await createSandbox({ apiKeys: [KEY], seed: 'reconcile-3', interviewMs: 600_000, log: () => {} });
    // Every answer of the service 300 ms late, so that the run is still going when Ctrl-C comes.
    const slow = createHttpServer((req, res) => {
      setTimeout(() => {
        const target = new URL(req.url!, sandbox.url);
        const forward = httpRequest(target, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        });
        req.pipe(forward);
      }, 300);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
    try {
      const call = apiClient(sandbox.apiUrl, KEY);
      const ids: string[] = [];
      for (let c = 0; c < 3; c++) {
        const id = (await call('POST', '/campaigns/create', JOB)).body.campaign_id as string;
        await call('POST', `/campaigns/${id}/candidates`, { candidates: [person(80 + 2 * c), person(81 + 2 * c)] });
        ids.push(id);
      }
      const dbPath = join(tmp.dir, 'interrupted.db');
      await (await openStore(dbPath)).close();
      const args = ['reconcile', '--db', dbPath, '--api-url', slowUrl, ...ids.flatMap((id) => ['--campaign', id])];

      const child = spawn(process.execPath, [CLI, ...args], {
        env: cliEnv({ PREQUAL_HOOKS_API_KEY: KEY }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.stdout.resume();
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await waitFor(() => (/\(1 of 3\)/.test(stderr) ? true : undefined), 15_000, 'the first campaign');
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr).toContain('stopping after the campaign being read');
      expect(stderr).toContain('interrupted; run it again');
      const first = readDb(dbPath, (db) => db.prepare('SELECT COUNT(*) FROM candidates').pluck().get()) as number;
      expect(first).toBeGreaterThanOrEqual(2);
      expect(first).toBeLessThan(6);

      const again = await runCliProcess([...args, '--json'], { env: { PREQUAL_HOOKS_API_KEY: KEY }, timeoutMs: 30_000 });
      expect(again.code, again.stderr).toBe(0);
      const report = JSON.parse(again.stdout);
      expect(report.resumed).toBe(true);
      expect(report.campaigns.length).toBe(3 - first / 2);
      expect(readDb(dbPath, (db) => db.prepare('SELECT COUNT(*) FROM candidates').pluck().get())).toBe(6);
    } finally {
      await new Promise((resolve) => slow.close(resolve));
      await sandbox.close();
    }
  }, 60_000);
});
