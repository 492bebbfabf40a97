import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/servers.js';
import { FIXTURES, readDb, SHUFFLED } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';

// In this process; the default database in the working folder is test/e2e/cli-bin.test.ts's (a process's own cwd).
// The tests are independent (each its own database): run concurrently.
describe.concurrent('prequal-hooks replay', () => {
  const tmp = tempDir('prequal-hooks-replay-');
  afterAll(() => tmp.cleanup());

  it('replays the shuffled lifecycle scenario into the projected state, and a second replay (database from PREQUAL_HOOKS_DB) changes nothing', async () => {
    const dbPath = join(tmp.dir, 'lifecycle.db');
    const first = await runCli(['replay', SHUFFLED, '--db', dbPath, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      received: 55,
      duplicates: 9,
      enqueued: 0,
      projected: 46,
      unknown: 0,
      dead: 0,
      erasures: 0,
      unreadable: [],
      projectedBy: 'here',
      owner: null,
    });
    // Small inputs print no progress and nothing else on stderr.
    expect(first.stderr).toBe('');
    const counts = readDb(dbPath, (db) => ({
      campaigns: db.prepare('SELECT COUNT(*) FROM campaigns').pluck().get(),
      candidates: db.prepare('SELECT COUNT(*) FROM candidates').pluck().get(),
      credits: db.prepare('SELECT credits_remaining FROM credits').pluck().get(),
    }));
    expect(counts).toEqual({ campaigns: 2, candidates: 14, credits: 0 });

    const again = await runCli(['replay', SHUFFLED], { env: { PREQUAL_HOOKS_DB: dbPath } });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`received 55, duplicates 55, projected 0, unknown 0, dead 0 (${dbPath})\n`);
  });

  it('counts unknown and dead events of a folder, and says where to see them', async () => {
    const dbPath = join(tmp.dir, 'invalid.db');
    const result = await runCli(['replay', `${FIXTURES}invalid`, '--db', dbPath, '--json']);
    expect(result.code).toBe(0);
    // .txt files are not read; not-an-envelope.json is a JSON array, which replay reads as a list of
    // events (its one element is a valid candidate.interview.started, hence one projected).
    expect(JSON.parse(result.stdout)).toEqual({
      received: 4,
      duplicates: 0,
      enqueued: 0,
      projected: 1,
      unknown: 1,
      dead: 2,
      erasures: 0,
      unreadable: [],
      projectedBy: 'here',
      owner: null,
    });
    expect(result.stderr).toContain('3 events set aside');
    expect(result.stderr).toContain(`prequal-hooks dead-letters --db ${dbPath}`);
  });

  it('exits 1 naming an input that cannot be read, after replaying the others', async () => {
    const dbPath = join(tmp.dir, 'partial.db');
    const missing = join(tmp.dir, 'no-such-file.ndjson');
    const result = await runCli(['replay', missing, `${FIXTURES}events/credits.low.json`, '--db', dbPath, '--json']);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ received: 1, projected: 1 });
    expect(summary.unreadable).toEqual([{ origin: missing, message: expect.stringContaining('ENOENT') }]);
    expect(result.stderr).toContain(`could not read ${missing}`);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('prints progress lines on stderr every --progress events', async () => {
    const ndjson = join(tmp.dir, 'many.ndjson');
    const lines = Array.from({ length: 5000 }, (_, i) =>
      JSON.stringify({
        event: 'credits.low',
        timestamp: new Date(Date.UTC(2026, 10, 20) + i * 1000).toISOString(),
        data: { credits_remaining: i, threshold: 10 },
      }),
    );
    writeFileSync(ndjson, `${lines.join('\n')}\n`);
    const result = await runCli(['replay', ndjson, '--db', join(tmp.dir, 'progress.db'), '--progress', '2000']);
    expect(result.code).toBe(0);
    // Batches commit every 2000 events: progress after 2000 and 4000, not after the last 1000.
    const progress = result.stderr.split('\n').filter((line) => line.includes('events/s'));
    expect(progress).toHaveLength(2);
    expect(progress[0]).toMatch(/^prequal-hooks replay: received 2000, /);
    expect(progress[1]).toMatch(/^prequal-hooks replay: received 4000, /);
    expect(result.stdout).toMatch(/^received 5000, duplicates 0, projected 5000, unknown 0, dead 0/);
  });

  it('is a usage error (exit 2) without an input, or with a bad --progress', async () => {
    const [none, badProgress] = await Promise.all([
      runCli(['replay', '--db', join(tmp.dir, 'x.db')]),
      runCli(['replay', SHUFFLED, '--db', join(tmp.dir, 'x.db'), '--progress', 'often']),
    ]);
    for (const result of [none, badProgress]) {
      expect(result.code).toBe(2);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(none.stderr).toMatch(/give at least one/);
    expect(existsSync(join(tmp.dir, 'x.db'))).toBe(false);
  });
});
