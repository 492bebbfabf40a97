// Every command that takes --db works on a postgres:// URL (and PREQUAL_HOOKS_DB), as on SQLite: with
// serve's processes here, beside which the commands run in this process (runCli of command-io.ts);
// without serve, test/integration/cli-postgres.test.ts.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { signedRequest } from 'prequal-hooks/testing';
import { killChildren, startServe } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { waitFor } from '../support/wait-for.js';

describe.skipIf(postgresUrl() === '')('the command line on PostgreSQL', () => {
  afterAll(() => killChildren());

  it('serve generates one secret for every replica, stored in the database, and `secret` prints it', async () => {
    const url = await createDatabase(postgresUrl(), `cli_${randomBytes(4).toString('hex')}`);
    const args = ['--port', '0', '--host', '127.0.0.1', '--db', url, '--log-level', 'warn'];
    const first = await startServe(args);
    const second = await startServe(args);
    const generated = /\n {4}(whsec_[0-9a-f]{64})\n/.exec(first.stderr())?.[1];
    expect(generated).toBeDefined();
    expect(second.stderr()).not.toContain(generated!);
    expect(second.stderr()).toMatch(/Using the webhook secret generated/);
    const printed = await runCli(['secret', '--db', url]);
    expect(printed.stdout.trim()).toBe(generated);
    expect(await first.stop()).toBe(0);
    expect(await second.stop()).toBe(0);
  });

  it("runs docs/postgresql.md's commands as written: every command finds a database made with --schema", async () => {
    const url = await createDatabase(postgresUrl(), `cli_${randomBytes(4).toString('hex')}`);
    const section = readFileSync(new URL('../../docs/postgresql.md', import.meta.url), 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const written = 'postgres://hooks:secret@db.internal:5432/agency';
    expect(block).toContain(written);
    const lines = block
      .replaceAll(written, url)
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    const env: Record<string, string> = {};
    let serve: Awaited<ReturnType<typeof startServe>> | undefined;
    const outputs: string[] = [];
    try {
      for (const line of lines) {
        const words = line.split(/\s+/).filter((w) => w !== '');
        if (words[0] === 'export') {
          for (const pair of words.slice(1)) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
          continue;
        }
        expect(words[0]).toBe('prequal-hooks');
        if (words[1] === 'serve') {
          serve = await startServe(
            [...words.slice(2), '--port', '0', '--host', '127.0.0.1', '--secret', 'readme-secret-0123456789', '--log-level', 'warn'],
            env,
          );
          const request = signedRequest(
            {
              event: 'campaign.created',
              timestamp: '2026-11-20T10:00:00Z',
              data: {
                campaign_id: 'cmp_readme',
                job_title: 'Welder',
                contract_type: 'CDI',
                candidate_link: 'https://example.test/c',
                questions_count: 3,
                status: 'active',
              },
            },
            { secret: 'readme-secret-0123456789' },
          );
          const answer = await fetch(serve.webhookUrl, { method: 'POST', headers: request.headers, body: request.body });
          expect(answer.status).toBe(200);
          continue;
        }
        const result = await runCli([...words.slice(1), '--json'], { env });
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        outputs.push(result.stdout);
      }
    } finally {
      await serve?.stop();
    }
    expect(serve).toBeDefined();
    expect(outputs).toHaveLength(2);
    await waitForInspect(url);
    // Without the schema, the command says where the tables are instead of "not ours".
    const lost = await runCli(['inspect', '--db', url]);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/schema "hooks" has them: give --schema hooks/);
    // A SQLite file has no schema: the flag there is a mistake worth saying.
    const sqlite = await runCli(['inspect', '--db', '/nonexistent.db', '--schema', 'hooks']);
    expect(sqlite.code).toBe(2);
    expect(sqlite.stderr).toMatch(/--schema applies to a PostgreSQL database/);
  });

  async function waitForInspect(url: string): Promise<void> {
    // Each check is a command's run: one every 200 ms is plenty.
    await waitFor(
      async () => {
        const inspected = await runCli(['inspect', '--db', url, '--schema', 'hooks', '--json']);
        const campaigns = JSON.parse(inspected.stdout).campaigns as Array<{ campaign_id: string }>;
        return campaigns.some((c) => c.campaign_id === 'cmp_readme');
      },
      15_000,
      'inspect to show the campaign cmp_readme',
      { everyMs: 200 },
    );
  }
});
