// Passwords in URLs: a PostgreSQL URL's (user:password@, or ?password= as libpq takes it) and a
// user name and password in --api-url or a webhook URL. Every command that takes one, in this
// process: the password is in no configuration dump or error, whatever fails. serve's log lines,
// and serve on a database it cannot reach: test/e2e/cli-url-credentials.test.ts.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

const PASSWORD = 'pg-Pa55word-in-url-7f3a';
const API_PASSWORD = 'api-Pa55word-in-url-91c2';
const KEY = `agency_live_${'Cr3ds'.repeat(8)}`;
const SECRET = 'whsec_url_credentials_0c1d9e';

const tmp = tempDir('prequal-hooks-url-credentials-');
afterAll(() => tmp.cleanup());

// Port 1 on this machine refuses at once: each command fails on the connection.
const UNREACHABLE = [
  `postgres://hooks:${PASSWORD}@127.0.0.1:1/agency`,
  `postgres://hooks@127.0.0.1:1/agency?sslmode=disable&password=${PASSWORD}`,
  `postgresql://127.0.0.1:1/agency?PASSWORD=${PASSWORD}`,
];

describe('a PostgreSQL URL with a password', () => {
  it('a database host that does not resolve is said to be unreachable, not a listening address to fix with --host', async () => {
    const result = await runCli(['migrate', '--db', `postgres://hooks:${PASSWORD}@no-such-host.invalid/agency`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^prequal-hooks migrate: cannot reach that address \((ENOTFOUND|EAI_AGAIN)\b.*Check the host name in --db/,
    );
    expect(result.stderr).not.toContain('--host');
    expect(result.stderr).not.toContain(PASSWORD);
  });

  it('serve --print-config masks the password of the user info and of the query', async () => {
    for (const [url, shown] of [
      [UNREACHABLE[0]!, 'postgres://hooks:***@127.0.0.1:1/agency'],
      [UNREACHABLE[1]!, 'postgres://hooks@127.0.0.1:1/agency?sslmode=disable&password=***'],
      [UNREACHABLE[2]!, 'postgresql://127.0.0.1:1/agency?PASSWORD=***'],
    ] as const) {
      const result = await runCli(['serve', '--print-config'], { env: { PREQUAL_HOOKS_DB: url } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(PASSWORD);
      expect(JSON.parse(result.stdout).db).toEqual({ value: shown, from: 'PREQUAL_HOOKS_DB' });
    }
  });

  it('is in no output of a command whose database cannot be reached', async () => {
    const commands = [
      ['inspect'],
      ['secret'],
      ['dead-letters'],
      ['migrate'],
      ['migrate', '--dry-run'],
      ['rebuild'],
      ['replay', join(tmp.dir, 'none.ndjson')],
      ['erase', '--candidate', 'cand-1', '--reason', 'test'],
      ['export', '--candidate', 'cand-1'],
      ['reconcile', '--api-url', 'http://127.0.0.1:9', '--api-key', KEY],
    ];
    for (const url of UNREACHABLE) {
      for (const command of commands) {
        const result = await runCli([...command, '--db', url]);
        const said = `${command.join(' ')} on ${url}: ${result.stderr}`;
        expect(result.code, said).not.toBe(0);
        expect(result.stderr, said).not.toBe('');
        expect(result.stdout + result.stderr, said).not.toContain(PASSWORD);
      }
    }
  }, 60_000);
});

describe('a user name and password in --api-url or a webhook URL', () => {
  const withCredentials = `https://agency:${API_PASSWORD}@127.0.0.1:9`;

  it('--print-config shows the --api-url without them', async () => {
    const result = await runCli(['serve', '--print-config', '--api-url', withCredentials], { env: { PREQUAL_HOOKS_API_KEY: KEY } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(API_PASSWORD);
    expect(JSON.parse(result.stdout)['api-url']).toEqual({ value: 'https://***@127.0.0.1:9/', from: '--api-url' });
  });

  it('reconcile and serve --reconcile-every refuse them (fetch cannot send them) without echoing them', async () => {
    const env = { PREQUAL_HOOKS_API_KEY: KEY };
    const reconcile = await runCli(['reconcile', '--db', join(tmp.dir, 'r.db'), '--api-url', withCredentials], { env });
    const serve = await runCli(
      ['serve', '--db', join(tmp.dir, 's.db'), '--secret', SECRET, '--reconcile-every', '5', '--api-url', withCredentials],
      { env },
    );
    for (const result of [reconcile, serve]) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('--api-url must not hold a user name or password (https://***@127.0.0.1:9/)');
      expect(result.stdout + result.stderr).not.toContain(API_PASSWORD);
    }
    // Unparsable, they are not echoed either.
    const unparsable = await runCli(['reconcile', '--db', join(tmp.dir, 'r.db'), '--api-url', `https://agency:${API_PASSWORD}@[::1`], {
      env,
    });
    expect(unparsable.code).toBe(2);
    expect(unparsable.stderr).not.toContain(API_PASSWORD);
  });

  it('send --url and sandbox --webhook-url refuse them without echoing them', async () => {
    const send = await runCli([
      'send',
      'candidate.added',
      '--url',
      `http://agency:${API_PASSWORD}@127.0.0.1:1/webhooks`,
      '--secret',
      SECRET,
    ]);
    const sandbox = await runCli(['sandbox', '--port', '0', '--webhook-url', `http://agency:${API_PASSWORD}@127.0.0.1:1/webhooks`]);
    const unparsable = await runCli([
      'send',
      'candidate.added',
      '--url',
      `http://agency:${API_PASSWORD}@[::1/webhooks`,
      '--secret',
      SECRET,
    ]);
    for (const result of [send, sandbox, unparsable]) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout + result.stderr).not.toContain(API_PASSWORD);
    }
    expect(send.stderr).toContain('--url must not hold a user name or password, got "http://***@127.0.0.1:1/webhooks"');
    expect(sandbox.stderr).toContain('--webhook-url must not hold a user name or password');
    expect(unparsable.stderr).toContain('got "http://***@[::1/webhooks"');
  });
});
