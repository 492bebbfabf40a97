// Passwords in URLs, in what only the real process shows: serve's log lines and its failure on a
// database it cannot reach (logged by its logger on the process's stdout). Every other command,
// and serve's configuration: test/integration/cli-url-credentials.test.ts, in this process.
import { afterAll, describe, expect, it } from 'vitest';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { waitFor } from '../support/wait-for.js';

const PASSWORD = 'pg-Pa55word-in-url-7f3a';
const SECRET = 'whsec_url_credentials_0c1d9e';

afterAll(() => killChildren());

// Port 1 on this machine refuses at once: serve fails on the connection.
const UNREACHABLE = [
  `postgres://hooks:${PASSWORD}@127.0.0.1:1/agency`,
  `postgres://hooks@127.0.0.1:1/agency?sslmode=disable&password=${PASSWORD}`,
  `postgresql://127.0.0.1:1/agency?PASSWORD=${PASSWORD}`,
];

describe('a PostgreSQL URL with a password', () => {
  it('is in no output of serve when its database cannot be reached', async () => {
    const results = await Promise.all(
      UNREACHABLE.map((url) => runCliProcess(['serve', '--port', '0', '--host', '127.0.0.1', '--secret', SECRET, '--db', url])),
    );
    results.forEach((result, i) => {
      const said = `serve on ${UNREACHABLE[i]!}: ${result.stderr}`;
      expect(result.code, said).not.toBe(0);
      expect(result.stderr, said).not.toBe('');
      expect(result.stdout + result.stderr, said).not.toContain(PASSWORD);
    });
  });

  it.skipIf(postgresUrl() === '')('serve, migrate and inspect on a real server show it masked in their lines and logs', async () => {
    // The test server trusts local connections: the password in the query is carried, not needed.
    const url = `${await createDatabase(postgresUrl(), `creds_${process.pid}_${Date.now()}`)}?password=${PASSWORD}`;
    const migrated = await runCliProcess(['migrate', '--db', url]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('?password=***');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', url, '--secret', SECRET, '--log-level', 'info']);
    const started = await waitFor(
      () => serve.logLines().find((line) => typeof line.msg === 'string' && line.msg.includes('receiving webhooks')),
      5000,
      'the start line',
    );
    expect(started.db).toMatch(/\?password=\*\*\*$/);
    expect(await serve.stop()).toBe(0);
    expect(serve.stdout() + serve.stderr()).not.toContain(PASSWORD);
    const inspected = await runCliProcess(['inspect', '--db', url, '--json']);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(inspected.stdout + inspected.stderr).not.toContain(PASSWORD);
  });
});
