// Several accounts in one `serve` (docs/accounts.md): accounts added, disabled, rotated and removed
// with the CLI while serve runs take effect within 2 s, each path verified with its own account's
// secrets only, each account's rows its own.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, readDb, runCliProcess, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const DEFAULT_SECRET = 'whsec_default_account_7f3a9c';
const ACME_SECRET = 'whsec_acme_account_0b12de44';
const ACME_NEXT = 'whsec_acme_account_next_91aa';

const campaign = (title: string, id = 'camp-shared-1') => ({
  event: 'campaign.created',
  timestamp: '2026-11-20T10:00:00.000Z',
  data: {
    campaign_id: id,
    job_title: title,
    contract_type: 'CDI',
    candidate_link: 'https://example.com/c',
    questions_count: 3,
    status: 'active',
  },
});

async function post(url: string, body: unknown, secret: string) {
  const request = signedRequest(body, { secret });
  const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  return { status: response.status, body: (await response.json()) as { error?: { code: string }; duplicate?: boolean } };
}

async function cli(args: string[]) {
  const result = await runCliProcess(args);
  if (result.code !== 0) throw new Error(`prequal-hooks ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result;
}

describe('serve with several accounts', () => {
  const tmp = tempDir('prequal-hooks-accounts-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('routes /webhooks/<key> to its account, within 2 s of each change, verified with that account secrets only', async () => {
    const db = join(tmp.dir, 'accounts.db');
    const serve = await startServe(['--db', db, '--secret', DEFAULT_SECRET, '--port', '0', '--host', '127.0.0.1']);

    const added = JSON.parse(
      (await cli(['accounts', 'add', '--db', db, '--account', 'acme', '--name', 'Acme Staffing', '--secret', ACME_SECRET, '--json']))
        .stdout,
    ) as {
      account: string;
      webhookPath: string;
    };
    expect(added.account).toBe('acme');
    expect(added.webhookPath).toMatch(/^\/webhooks\/[A-Za-z0-9_-]{32,}$/);
    expect(added.webhookPath).not.toContain('acme');
    expect(statSync(`${db}.accounts-key`).mode & 0o777).toBe(0o600);
    const acmeUrl = `${serve.baseUrl}${added.webhookPath}`;

    // Taken up without a restart, within 2 s.
    const since = Date.now();
    await waitFor(
      async () => ((await post(acmeUrl, campaign('Acme welder'), ACME_SECRET)).status === 200 ? true : undefined),
      2500,
      'the new account routed',
    );
    expect(Date.now() - since).toBeLessThan(2500);
    expect((await post(serve.webhookUrl, campaign('Default driver'), DEFAULT_SECRET)).status).toBe(200);

    // Each path takes its own account's secret only: never another's.
    expect((await post(acmeUrl, campaign('forged'), DEFAULT_SECRET)).status).toBe(401);
    expect((await post(serve.webhookUrl, campaign('forged'), ACME_SECRET)).status).toBe(401);
    const unknown = await post(`${serve.baseUrl}/webhooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`, campaign('x'), ACME_SECRET);
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'UNKNOWN_WEBHOOK_PATH' } } });

    // The same campaign id in two accounts: two rows that never meet.
    await waitFor(
      () => readDb(db, (d) => (d.prepare('SELECT count(*) FROM campaigns').pluck().get() === 2 ? true : undefined)),
      5000,
      'both projected',
    );
    const titles = readDb(db, (d) => d.prepare('SELECT account, job_title FROM campaigns ORDER BY account').all());
    expect(titles).toEqual([
      { account: 'acme', job_title: 'Acme welder' },
      { account: 'default', job_title: 'Default driver' },
    ]);
    const inspected = JSON.parse((await cli(['inspect', '--db', db, '--account', 'acme', '--json'])).stdout) as {
      campaigns: Array<{ job_title: string }>;
    };
    expect(inspected.campaigns.map((c) => c.job_title)).toEqual(['Acme welder']);

    // Disabled: refused, nothing stored; enabled again: taken.
    await cli(['accounts', 'disable', '--db', db, '--account', 'acme']);
    await waitFor(
      async () => ((await post(acmeUrl, campaign('while disabled', 'camp-2'), ACME_SECRET)).status === 403 ? true : undefined),
      2500,
      'disabled',
    );
    // Until the change was seen, the posts were taken; once refused, nothing more is stored.
    const stored = readDb(db, (d) => d.prepare("SELECT count(*) FROM inbox WHERE account = 'acme'").pluck().get());
    expect(await post(acmeUrl, campaign('still disabled', 'camp-2b'), ACME_SECRET)).toMatchObject({
      status: 403,
      body: { error: { code: 'ACCOUNT_DISABLED' } },
    });
    expect(readDb(db, (d) => d.prepare("SELECT count(*) FROM inbox WHERE account = 'acme'").pluck().get())).toBe(stored);
    await cli(['accounts', 'enable', '--db', db, '--account', 'acme']);
    await waitFor(
      async () => ((await post(acmeUrl, campaign('enabled again', 'camp-3'), ACME_SECRET)).status === 200 ? true : undefined),
      2500,
      'enabled',
    );

    // Rotation: the previous secret verifies during the overlap, then stops when it ends.
    await cli(['accounts', 'rotate-secret', '--db', db, '--account', 'acme', '--secret', ACME_NEXT, '--keep-previous', '24h']);
    await waitFor(
      async () => ((await post(acmeUrl, campaign('new secret', 'camp-4'), ACME_NEXT)).status === 200 ? true : undefined),
      2500,
      'rotated',
    );
    expect((await post(acmeUrl, campaign('old secret in overlap', 'camp-5'), ACME_SECRET)).status).toBe(200);
    await cli(['accounts', 'rotate-secret', '--db', db, '--account', 'acme', '--secret', ACME_NEXT, '--keep-previous', '0']);
    await waitFor(
      async () => ((await post(acmeUrl, campaign('old secret after', 'camp-6'), ACME_SECRET)).status === 401 ? true : undefined),
      2500,
      'overlap ended',
    );

    // Removal: every row of the account gone, the path unknown; the default account untouched.
    await cli(['accounts', 'remove', '--db', db, '--account', 'acme', '--erase-data', '--reason', 'contract ended']);
    await waitFor(
      async () => ((await post(acmeUrl, campaign('after removal', 'camp-7'), ACME_NEXT)).status === 404 ? true : undefined),
      2500,
      'removed',
    );
    expect(readDb(db, (d) => d.prepare("SELECT count(*) FROM inbox WHERE account = 'acme'").pluck().get())).toBe(0);
    expect(readDb(db, (d) => d.prepare("SELECT count(*) FROM campaigns WHERE account = 'acme'").pluck().get())).toBe(0);
    expect(readDb(db, (d) => d.prepare('SELECT job_title FROM campaigns').pluck().all())).toEqual(['Default driver']);

    // No secret in the logs.
    for (const secret of [DEFAULT_SECRET, ACME_SECRET, ACME_NEXT]) expect(serve.stdout() + serve.stderr()).not.toContain(secret);
    const logged = serve.logLines().filter((l) => l.msg === 'webhook');
    expect(logged.some((l) => l.account === 'acme')).toBe(true);
    expect(serve.stdout()).not.toContain(added.webhookPath.split('/').at(-1));
    await serve.stop();
  }, 60_000);

  it("takes an account's path with a trailing slash, as the adapters do", async () => {
    const db = join(tmp.dir, 'slash.db');
    const { webhookPath } = JSON.parse(
      (await cli(['accounts', 'add', '--db', db, '--account', 'acme', '--secret', ACME_SECRET, '--json'])).stdout,
    ) as {
      webhookPath: string;
    };
    const serve = await startServe(['--db', db, '--secret', DEFAULT_SECRET, '--port', '0', '--host', '127.0.0.1']);
    const delivery = sampleEvent('candidate.added', { data: { candidate_id: 'cand-slash-1' } });
    expect(await post(`${serve.baseUrl}${webhookPath}/`, delivery, ACME_SECRET)).toEqual({
      status: 200,
      body: { received: true, duplicate: false },
    });
    // The same delivery again, without the slash: the same account's duplicate.
    expect((await post(`${serve.baseUrl}${webhookPath}`, delivery, ACME_SECRET)).body).toEqual({ received: true, duplicate: true });
    expect(readDb(db, (d) => d.prepare('SELECT account FROM inbox').pluck().all())).toEqual(['acme']);
    // Verified as the account's: the default account's secret does not open it.
    expect((await post(`${serve.baseUrl}${webhookPath}/?x=1`, delivery, DEFAULT_SECRET)).status).toBe(401);
    // One trailing slash, as the adapters take: not two.
    expect((await post(`${serve.baseUrl}${webhookPath}//`, delivery, ACME_SECRET)).status).toBe(404);
    // The default account's path takes its trailing slash too.
    const defaults = sampleEvent('candidate.added', { data: { candidate_id: 'cand-slash-2' } });
    expect(await post(`${serve.baseUrl}/webhooks/`, defaults, DEFAULT_SECRET)).toEqual({
      status: 200,
      body: { received: true, duplicate: false },
    });
    await serve.stop();
  }, 30_000);

  it('says how many accounts it serves at start, and logs each change of the registry by id, never a secret or a route key', async () => {
    const db = join(tmp.dir, 'changes.db');
    const north = JSON.parse(
      (await cli(['accounts', 'add', '--db', db, '--account', 'north', '--secret', ACME_SECRET, '--json'])).stdout,
    ) as {
      webhookPath: string;
    };
    const serve = await startServe(['--db', db, '--secret', DEFAULT_SECRET, '--port', '0', '--host', '127.0.0.1']);
    expect(serve.stderr()).toMatch(/receiving webhooks on POST \S+ \(database [^,]+, 2 accounts\)\n/);
    const start = await waitFor(
      () => serve.logLines().find((l) => typeof l.msg === 'string' && l.msg.startsWith('prequal-hooks listening on')),
      5000,
      'the start line',
    );
    expect(start).toMatchObject({ accounts: { active: 2, disabled: 0 } });
    expect(start.msg).toMatch(/ for 2 accounts$/);

    const changed = (kind: string, account: string) =>
      waitFor(
        () => serve.logLines().find((l) => l.msg !== undefined && (l[kind] as string[] | undefined)?.includes(account)),
        5000,
        `the log line of ${account} ${kind}`,
      );
    const south = JSON.parse((await cli(['accounts', 'add', '--db', db, '--account', 'south', '--json'])).stdout) as {
      webhookPath: string;
      secret: string;
    };
    expect(await changed('added', 'south')).toMatchObject({
      level: 30,
      msg: 'accounts changed: 1 added (south); serving 3 accounts',
      accounts: { active: 3, disabled: 0 },
    });
    await cli(['accounts', 'disable', '--db', db, '--account', 'south']);
    expect((await changed('disabled', 'south')).msg).toBe('accounts changed: 1 disabled (south); serving 2 accounts');
    await cli(['accounts', 'enable', '--db', db, '--account', 'south']);
    expect((await changed('enabled', 'south')).msg).toBe('accounts changed: 1 enabled (south); serving 3 accounts');
    await cli(['accounts', 'rotate-secret', '--db', db, '--account', 'north', '--secret', ACME_NEXT]);
    expect((await changed('secretRotated', 'north')).msg).toBe('accounts changed: 1 secret rotated (north); serving 3 accounts');
    await cli(['accounts', 'remove', '--db', db, '--account', 'south', '--erase-data', '--reason', 'test']);
    expect((await changed('removed', 'south')).msg).toBe('accounts changed: 1 removed (south); serving 2 accounts');

    const logged = serve.stdout() + serve.stderr();
    for (const secret of [DEFAULT_SECRET, ACME_SECRET, ACME_NEXT, south.secret]) expect(logged).not.toContain(secret);
    for (const path of [north.webhookPath, south.webhookPath]) expect(logged).not.toContain(path.split('/').at(-1));
    await serve.stop();
  }, 60_000);

  it('send --account signs with the account secret and posts to its path', async () => {
    const db = join(tmp.dir, 'send.db');
    const serve = await startServe(['--db', db, '--secret', DEFAULT_SECRET, '--port', '0', '--host', '127.0.0.1']);
    await cli(['accounts', 'add', '--db', db, '--account', 'north-branch', '--secret', ACME_SECRET]);
    const sent = await waitFor(
      async () => {
        const result = await runCliProcess([
          'send',
          'campaign.created',
          '--url',
          serve.webhookUrl,
          '--account',
          'north-branch',
          '--db',
          db,
        ]);
        return result.code === 0 ? result : undefined;
      },
      5000,
      'send --account accepted',
    );
    expect(sent.stdout).toContain('HTTP 200');
    expect(readDb(db, (d) => d.prepare("SELECT count(*) FROM inbox WHERE account = 'north-branch'").pluck().get())).toBe(1);
    const fingerprints = await cli(['secret', '--db', db, '--account', 'north-branch']);
    expect(fingerprints.stdout.trim()).toMatch(/^[0-9a-f]{12}$/);
    expect(fingerprints.stdout + fingerprints.stderr).not.toContain(ACME_SECRET);
    await serve.stop();
  }, 30_000);
});
