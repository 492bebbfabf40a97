// Every command that takes --db works on a postgres:// URL (and PREQUAL_HOOKS_DB), as on SQLite, in
// this process (with serve: test/e2e/cli-postgres.test.ts).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FIXTURES, SHUFFLED } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';
import { postgresUrl } from '../support/engines.js';
import { createDatabase } from '../support/postgres-server.js';

describe.skipIf(postgresUrl() === '')('the command line on PostgreSQL', () => {
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

  it('read-only commands refuse a database that is not ours, without writing to it', async () => {
    const url = await createDatabase(postgresUrl(), `cli_${randomBytes(4).toString('hex')}`);
    const result = await runCli(['inspect', '--db', url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not a prequal-hooks database/);
    expect((await runCli(['inspect', '--db', url])).stderr).toMatch(/not a prequal-hooks database/); // nothing was created
  });
});
