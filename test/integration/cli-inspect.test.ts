import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/servers.js';
import { SHUFFLED } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';

// The tests only read the replayed database: run concurrently.
describe.concurrent('prequal-hooks inspect, after replaying the lifecycle scenario', () => {
  const tmp = tempDir('prequal-hooks-inspect-');
  beforeAll(async () => {
    const replayed = await runCli(['replay', SHUFFLED, '--db', tmp.dbPath]);
    expect(replayed.code).toBe(0);
  });
  afterAll(() => tmp.cleanup());

  it('prints campaigns with their stats, credits and inbox counts as JSON', async () => {
    const result = await runCli(['inspect', '--db', tmp.dbPath, '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const state = JSON.parse(result.stdout);
    expect(Object.keys(state)).toEqual(['campaigns', 'next', 'credits', 'inbox']);
    expect(state.next).toBeNull();
    const stats = Object.fromEntries(state.campaigns.map((c: { campaign_id: string; stats: unknown }) => [c.campaign_id, c.stats]));
    expect(stats).toEqual({
      cmp_Rk4vN8qWz2: { total_candidates: 8, interviews_completed: 4, average_score: 7.375 },
      cmp_bT9mXe3Lh6: { total_candidates: 6, interviews_completed: 3, average_score: 6.5 },
    });
    expect(state.campaigns.find((c: { campaign_id: string }) => c.campaign_id === 'cmp_Rk4vN8qWz2')).toMatchObject({
      job_title: 'Préparateur de commandes H/F',
      status: 'completed',
      created_at: '2026-11-16T08:30:00.000Z',
    });
    expect(state.credits).toEqual({ credits_remaining: 0, low_threshold: 10, last_campaign_id: 'cmp_bT9mXe3Lh6' });
    expect(state.inbox).toEqual({ pending: 0, projected: 46, unknown: 0, dead: 0, handler_failures: 0 });
  });

  it('prints JSON by default when stdout is not a terminal, and reads the database from PREQUAL_HOOKS_DB', async () => {
    const result = await runCli(['inspect'], { env: { PREQUAL_HOOKS_DB: tmp.dbPath } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).campaigns).toHaveLength(2);
  });

  it('pages the campaigns, newest first, with --limit and --after', async () => {
    const first = await runCli(['inspect', '--db', tmp.dbPath, '--json', '--limit', '1']);
    expect(first.code).toBe(0);
    const page = JSON.parse(first.stdout);
    expect([page.campaigns.map((c: { campaign_id: string }) => c.campaign_id), page.next]).toEqual([['cmp_bT9mXe3Lh6'], 'cmp_bT9mXe3Lh6']);
    const second = JSON.parse((await runCli(['inspect', '--db', tmp.dbPath, '--json', '--limit', '1', '--after', page.next])).stdout);
    expect([second.campaigns.map((c: { campaign_id: string }) => c.campaign_id), second.next]).toEqual([['cmp_Rk4vN8qWz2'], null]);
    const text = await runCli(['inspect', '--db', tmp.dbPath, '--table', '--limit', '1']);
    expect(text.stdout).toContain('More campaigns: prequal-hooks inspect --after cmp_bT9mXe3Lh6');
    const refused = await runCli(['inspect', '--db', tmp.dbPath, '--limit', '0']);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('--limit: an integer from 1 to 500')]);
    expect((await runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_Rk4vN8qWz2', '--after', 'x'])).code).toBe(2);
  });

  it("lists a campaign's candidates best score first, candidates without a score last", async () => {
    const result = await runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_Rk4vN8qWz2', '--json']);
    expect(result.code).toBe(0);
    const page = JSON.parse(result.stdout);
    expect(page.campaign).toMatchObject({ campaign_id: 'cmp_Rk4vN8qWz2', stats: { total_candidates: 8 } });
    expect(page.pagination).toEqual({ total: 8, page: 1, per_page: 50, total_pages: 1 });
    const scores = page.candidates.map((c: { interview_score: number | null }) => c.interview_score);
    expect(scores).toEqual([8.5, 7.5, 7, 6.5, null, null, null, null]);
    // The user's own data, printed in full.
    expect(page.candidates[0]).toMatchObject({
      first_name: 'Éloïse',
      last_name: 'Marchand',
      email: 'eloise.marchand@gmail.com',
      status: 'completed',
    });
  });

  it('passes --status, --min-score, --page and --per-page to the candidate list', async () => {
    const [filtered, second] = await Promise.all([
      runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_Rk4vN8qWz2', '--status', 'completed', '--min-score', '7', '--json']),
      runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_Rk4vN8qWz2', '--per-page', '3', '--page', '2', '--json']),
    ]);
    expect(JSON.parse(filtered.stdout).candidates.map((c: { interview_score: number }) => c.interview_score)).toEqual([8.5, 7.5, 7]);
    const page = JSON.parse(second.stdout);
    expect(page.candidates.map((c: { interview_score: number | null }) => c.interview_score)).toEqual([6.5, null, null]);
    expect(page.pagination).toEqual({ total: 8, page: 2, per_page: 3, total_pages: 3 });
  });

  it('prints aligned tables with --table', async () => {
    const [overview, candidates] = await Promise.all([
      runCli(['inspect', '--db', tmp.dbPath, '--table']),
      runCli(['inspect', '--db', tmp.dbPath, '--table', '--campaign', 'cmp_bT9mXe3Lh6']),
    ]);
    expect(overview.code).toBe(0);
    const lines = overview.stdout.split('\n');
    const header = lines[0]!;
    expect(header).toMatch(/^CAMPAIGN\s+STATUS\s+JOB TITLE\s+CONTRACT\s+CANDIDATES\s+COMPLETED\s+AVG SCORE\s+CREATED \(UTC\)$/);
    const rows = lines.slice(1, 3);
    // Each value starts under its header.
    for (const [column, values] of [
      ['STATUS', ['paused', 'completed']],
      ['CREATED (UTC)', ['2026-11-17 13:45', '2026-11-16 08:30']],
    ] as const) {
      const at = header.indexOf(column);
      expect(rows.map((row) => row.slice(at).split('  ')[0])).toEqual(values);
    }
    // Right-aligned numbers end under the end of their header.
    const avgEnd = header.indexOf('AVG SCORE') + 'AVG SCORE'.length;
    expect(rows.map((row) => row.slice(0, avgEnd).trimEnd().split(' ').at(-1))).toEqual(['6.5', '7.38']);
    expect(overview.stdout).toContain('Credits  0 remaining, low threshold 10, last campaign cmp_bT9mXe3Lh6');
    expect(overview.stdout).toContain('Inbox    46 projected, 0 pending, 0 unknown, 0 dead; 0 handler failures');

    expect(candidates.code).toBe(0);
    expect(candidates.stdout).toMatch(
      /^cmp_bT9mXe3Lh6 {2}Assistant\(e\) comptable fournisseurs H\/F {2}paused\n6 candidates, 3 interviews completed, average score 6.5\n/,
    );
    expect(candidates.stdout).toMatch(/\n# +SCORE +STATUS +NAME +EMAIL +PHONE/);
    expect(candidates.stdout).toContain('Page 1 of 1 (6 candidates, 50 per page)');
  });

  it('is a usage error (exit 2) for invalid list parameters or flags without --campaign; exit 1 for an unknown campaign', async () => {
    const [perPage, status, orphan, both, unknown] = await Promise.all([
      runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_Rk4vN8qWz2', '--per-page', '500']),
      runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_Rk4vN8qWz2', '--status', 'hired']),
      runCli(['inspect', '--db', tmp.dbPath, '--min-score', '5']),
      runCli(['inspect', '--db', tmp.dbPath, '--json', '--table']),
      runCli(['inspect', '--db', tmp.dbPath, '--campaign', 'cmp_nope']),
    ]);
    for (const result of [perPage, status, orphan, both]) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(perPage.stderr).toMatch(/--per-page/);
    expect(status.stderr).toMatch(/--status/);
    expect(orphan.stderr).toMatch(/--campaign/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no campaign cmp_nope/);
  });

  it('exits 1 when the database does not exist, without creating it', async () => {
    const missing = join(tmp.dir, 'elsewhere', 'missing.db');
    const result = await runCli(['inspect', '--db', missing]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/no database at .*missing\.db/);
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(tmp.dir, 'elsewhere'))).toBe(false);
  });
});
