import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/servers.js';
import { FIXTURES, readDb } from '../support/cli-process.js';
import { runCli } from '../support/command-io.js';

interface Listed {
  events: Array<{
    inbox_id: number;
    state: string;
    kind: string | null;
    verdict: string;
    reasons: Array<{ path: string; message: string }>;
    body: string;
  }>;
  handler_failures: unknown[];
}

describe('prequal-hooks dead-letters, after replaying the invalid fixtures', () => {
  const tmp = tempDir('prequal-hooks-dead-');
  const byKind = new Map<string | null, number>();
  let notJsonId = 0;

  async function list(): Promise<Listed> {
    const result = await runCli(['dead-letters', '--db', tmp.dbPath, '--json']);
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as Listed;
  }

  beforeAll(async () => {
    // Beside fixtures/invalid, a .json file that is not JSON: a dead letter that is not an envelope.
    const broken = join(tmp.dir, 'broken.json');
    writeFileSync(broken, readFileSync(`${FIXTURES}invalid/not-json.txt`));
    const replayed = await runCli(['replay', `${FIXTURES}invalid`, broken, '--db', tmp.dbPath, '--json']);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ unknown: 1, dead: 3 });
    for (const event of (await list()).events) {
      if (event.verdict === 'accepted') byKind.set(event.kind, event.inbox_id);
      else notJsonId = event.inbox_id;
    }
  });
  afterAll(() => tmp.cleanup());

  it('lists event dead letters with their state, kind, reasons and body, as JSON', async () => {
    const listed = await list();
    expect(listed.handler_failures).toEqual([]);
    const summary = listed.events.map(({ state, kind, verdict, reasons }) => ({ state, kind, verdict, paths: reasons.map((r) => r.path) }));
    expect(summary).toEqual([
      { state: 'dead', kind: 'candidate.added', verdict: 'accepted', paths: ['timestamp'] },
      { state: 'dead', kind: 'candidate.interview.completed', verdict: 'accepted', paths: ['data.candidate_id', 'data.interview_score'] },
      { state: 'unknown', kind: 'candidate.interview.rescheduled', verdict: 'accepted', paths: ['event'] },
      { state: 'dead', kind: null, verdict: 'invalid_json', paths: [''] },
    ]);
    expect(listed.events[1]!.body).toBe(readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8'));
  });

  it('lists them as a table with --table, reasons included', async () => {
    const result = await runCli(['dead-letters', '--db', tmp.dbPath, '--table']);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('Events set aside');
    expect(lines[1]).toMatch(/^INBOX ID\s+STATE\s+KIND\s+VERDICT\s+RECEIVED \(UTC\)\s+REASONS$/);
    const unknownLine = lines.find((line) => line.includes('candidate.interview.rescheduled'))!;
    expect(unknownLine).toMatch(
      /^\s*\d+\s+unknown\s+candidate\.interview\.rescheduled\s+accepted\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+event: unknown event kind/,
    );
    expect(result.stdout).toContain('timestamp: must be ISO 8601 with seconds and a zone');
    expect(result.stdout).toContain('No handler failures.');
  });

  it('reprocess --all processes them in the process, leaves the still-invalid ones set aside, and is idempotent', async () => {
    const before = await list();
    const first = await runCli(['dead-letters', 'reprocess', '--all', '--db', tmp.dbPath, '--json']);
    expect(first.code).toBe(0);
    const outcome = JSON.parse(first.stdout);
    expect(outcome.requeued).toEqual([...byKind.values()]);
    expect(outcome.results.map((r: { before: string; after: string }) => [r.before, r.after])).toEqual([
      ['dead', 'dead'],
      ['dead', 'dead'],
      ['unknown', 'unknown'],
    ]);
    expect(outcome.skipped).toEqual([{ inbox_id: notJsonId, reason: expect.stringContaining('not an event envelope') }]);
    // Nothing left pending: the command processed what it requeued before exiting.
    expect(readDb(tmp.dbPath, (db) => db.prepare("SELECT COUNT(*) FROM inbox WHERE state = 'pending'").pluck().get())).toBe(0);

    const second = await runCli(['dead-letters', 'reprocess', '--all', '--db', tmp.dbPath, '--json']);
    expect(JSON.parse(second.stdout)).toEqual(outcome);
    const after = await list();
    expect(after.events.map(({ inbox_id, state, reasons }) => ({ inbox_id, state, reasons }))).toEqual(
      before.events.map(({ inbox_id, state, reasons }) => ({ inbox_id, state, reasons })),
    );
  });

  it('reprocess <id> projects a dead letter once its stored body is mended', async () => {
    const id = byKind.get('candidate.interview.completed')!;
    const mended = JSON.parse(readFileSync(`${FIXTURES}invalid/invalid-data.json`, 'utf8'));
    mended.data.candidate_id = 'cand-mended-1';
    mended.data.interview_score = 8;
    const db = new Database(tmp.dbPath);
    // The body as received (codec 0): the inbox stores bodies compact (src/store/bodies.ts).
    db.prepare('UPDATE inbox SET raw = ?, codec = 0 WHERE inbox_id = ?').run(Buffer.from(JSON.stringify(mended)), id);
    db.close();

    const result = await runCli(['dead-letters', 'reprocess', String(id), '--db', tmp.dbPath, '--table']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^\\s*${id}\\s+candidate\\.interview\\.completed\\s+dead\\s+projected`, 'm'));
    expect(result.stdout).toContain('Requeued and processed 1: 1 projected, 0 still set aside.');
    const candidate = readDb(tmp.dbPath, (reader) =>
      reader.prepare('SELECT status, interview_score FROM candidates WHERE candidate_id = ?').get('cand-mended-1'),
    );
    expect(candidate).toEqual({ status: 'completed', interview_score: 8 });
    expect((await list()).events.map((e) => e.inbox_id)).not.toContain(id);
  });

  it('reprocess exits 1 for ids that cannot be requeued, naming why', async () => {
    const result = await runCli(['dead-letters', 'reprocess', String(notJsonId), '99999', '--db', tmp.dbPath, '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).skipped.map((s: { inbox_id: number }) => s.inbox_id)).toEqual([notJsonId, 99999]);
    expect(result.stderr).toMatch(/not an event envelope/);
    expect(result.stderr).toMatch(/99999 \(no inbox row has this id\)/);
  });

  it('reprocess is a usage error (exit 2) without ids or --all, with both, or with ids that are not whole numbers', async () => {
    const results = await Promise.all([
      runCli(['dead-letters', 'reprocess', '--db', tmp.dbPath]),
      runCli(['dead-letters', 'reprocess', '--all', '3', '--db', tmp.dbPath]),
      runCli(['dead-letters', 'reprocess', 'abc', '--db', tmp.dbPath]),
      runCli(['dead-letters', 'reprocess', '1.5', '--db', tmp.dbPath]),
    ]);
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(results[2].stderr).toContain('"abc"');
  });

  it('exits 1 when the database does not exist', async () => {
    const [listing, reprocessing] = await Promise.all([
      runCli(['dead-letters', '--db', join(tmp.dir, 'missing.db')]),
      runCli(['dead-letters', 'reprocess', '--all', '--db', join(tmp.dir, 'missing.db')]),
    ]);
    for (const result of [listing, reprocessing]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/no database at/);
    }
  });
});
