// Every command that takes --db works on a postgres:// URL (and PREQUAL_HOOKS_DB), as on SQLite.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { signedRequest } from 'prequal-hooks/testing';
import { FIXTURES, killChildren, runCli, SHUFFLED, startServe } from '../support/cli-process.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';
import { waitFor } from '../support/wait-for.js';

describe.skipIf(postgresUrl() === '')('the command line on PostgreSQL', () => {
  afterAll(() => killChildren());

  it('replay, inspect, dead-letters (and reprocess) take a postgres:// URL, never printing its password', async () => {
    const url = await createDatabase(postgresUrl(), `cli_${randomBytes(4).toString('hex')}`);
    const withPassword = url.replace('prequal@', 'prequal:hunter2@');
    const replayed = await runCli(['replay', SHUFFLED, `${FIXTURES}invalid`, '--db', withPassword, '--json']);
    expect(replayed.code).toBe(0);
    const summary = JSON.parse(replayed.stdout);
    expect(summary).toMatchObject({ received: 59, duplicates: 9, unknown: 1, unreadable: [] });
    expect(summary.projected + summary.unknown + summary.dead).toBe(50);
    expect(replayed.stdout + replayed.stderr).not.toContain('hunter2');

    const inspected = await runCli(['inspect', '--json'], { env: { PREQUAL_HOOKS_DB: url } });
    expect(inspected.code).toBe(0);
    const overview = JSON.parse(inspected.stdout);
    expect(overview.campaigns.map((c: { campaign_id: string }) => c.campaign_id)).toEqual(
      expect.arrayContaining(['cmp_bT9mXe3Lh6', 'cmp_Rk4vN8qWz2']),
    );
    expect(overview.credits).toEqual({ credits_remaining: 0, low_threshold: 10, last_campaign_id: 'cmp_bT9mXe3Lh6' });
    expect(overview.inbox).toMatchObject({ projected: summary.projected, unknown: 1, dead: summary.dead, pending: 0 });

    const page = JSON.parse((await runCli(['inspect', '--db', url, '--campaign', 'cmp_Rk4vN8qWz2', '--per-page', '2', '--json'])).stdout);
    expect(page.candidates.map((c: { interview_score: number }) => c.interview_score)).toEqual([8.5, 7.5]);
    expect(page.candidates[0].interview_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const letters = JSON.parse((await runCli(['dead-letters', '--db', url, '--json'])).stdout);
    expect(letters.events).toHaveLength(summary.unknown + summary.dead);
    const reprocessed = await runCli(['dead-letters', 'reprocess', '--all', '--db', url, '--json']);
    expect(reprocessed.code).toBe(0);
    // Every envelope is requeued; a body that is not one stays set aside.
    expect(JSON.parse(reprocessed.stdout).requeued).toHaveLength(
      letters.events.filter((e: { verdict: string }) => e.verdict === 'accepted').length,
    );
  });

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

  it('read-only commands refuse a database that is not ours, without writing to it', async () => {
    const url = await createDatabase(postgresUrl(), `cli_${randomBytes(4).toString('hex')}`);
    const result = await runCli(['inspect', '--db', url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not a prequal-hooks database/);
    expect((await runCli(['inspect', '--db', url])).stderr).toMatch(/not a prequal-hooks database/); // nothing was created
  });

  it("runs the README's PostgreSQL commands as written: every command finds a database made with --schema", async () => {
    const url = await createDatabase(postgresUrl(), `cli_${randomBytes(4).toString('hex')}`);
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## PostgreSQL: several replicas'), readme.indexOf('## The projected state'));
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
    // Each check is a command-line process: one every 200 ms is plenty.
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
