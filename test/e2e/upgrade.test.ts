// A database made by the previous release (0.2.0, schema 11: identity unique on its own, two
// indexes by handler key) upgraded in place by `serve` (0.3.0). Made by
// test/fixtures/databases/make-release-database.mjs with that release's package: 36 events
// received and projected, the first candidate erased, a dead letter, and 10 events stored pending.
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sendSigned } from '../../src/testing/index.js';
import { killChildren, readDb, runCliProcess, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { readTables } from '../support/tables.js';
import { waitFor } from '../support/wait-for.js';

const RELEASE_DB = new URL('../fixtures/databases/0.2.0.db', import.meta.url);
const SECRET = 'release-database-secret-7f3a';
const SCENARIO = new URL('../../fixtures/scenarios/campaign-lifecycle.ndjson', import.meta.url);
const EXPECTED = new URL('../../fixtures/scenarios/campaign-lifecycle.expected.json', import.meta.url);
const ERASED = 'f332892f-d38e-44df-8ebf-7c9f49065885';

const lines = readFileSync(SCENARIO, 'utf8').trim().split('\n');
/** The same event spelt otherwise: keys in reverse order, spaces (one identity, other bytes). */
const respelt = (line: string) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(line) as object).reverse()), null, 1);

describe('a database made by release 0.2.0', () => {
  const tmp = tempDir('prequal-hooks-upgrade-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('migrates in place at start: pending rows projected, every earlier event still a duplicate, the erasure kept, new events filed dated', async () => {
    const db = join(tmp.dir, 'release.db');
    copyFileSync(RELEASE_DB, db);
    expect(readDb(db, (d) => d.prepare('SELECT max(version) FROM schema_migrations').pluck().get())).toBe(11);

    const serve = await startServe(['--db', db, '--secret', SECRET, '--port', '0', '--host', '127.0.0.1']);
    await waitFor(
      () => (readDb(db, (d) => d.prepare("SELECT count(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined),
      10_000,
      'the pending rows of 0.2.0 projected',
    );

    // Every event the old release stored, sent again as sent then and spelt otherwise: duplicates.
    for (const line of lines) {
      for (const body of [line, respelt(line)]) {
        const answer = await sendSigned(serve.webhookUrl, body, { secret: SECRET });
        expect(answer, body.slice(0, 80)).toMatchObject({ status: 200, body: { received: true, duplicate: true } });
      }
    }
    // A new event is stored once, filed under its instant; its repeat is a duplicate.
    const late = JSON.parse(lines[1]!) as { timestamp: string; data: Record<string, unknown> };
    const fresh = JSON.stringify({
      event: 'candidate.added',
      timestamp: '2026-11-18T09:00:00.000Z',
      data: { ...late.data, candidate_id: 'cand-after-upgrade', email: 'apres@exemple.fr' },
    });
    expect((await sendSigned(serve.webhookUrl, fresh, { secret: SECRET })).body).toEqual({ received: true, duplicate: false });
    expect((await sendSigned(serve.webhookUrl, respelt(fresh), { secret: SECRET })).body).toEqual({ received: true, duplicate: true });
    // The erased person's event, dated before the erasure and never seen: changes nothing.
    const erasedLate = JSON.stringify({
      event: 'candidate.interview.failed',
      timestamp: '2026-11-17T08:00:00Z',
      data: { candidate_id: ERASED, campaign_id: late.data.campaign_id, failure_reason: 'voicemail' },
    });
    expect((await sendSigned(serve.webhookUrl, erasedLate, { secret: SECRET })).body).toEqual({ received: true, duplicate: false });
    await waitFor(
      () => (readDb(db, (d) => d.prepare("SELECT count(*) FROM inbox WHERE state = 'pending'").pluck().get()) === 0 ? true : undefined),
      10_000,
      'projection',
    );

    const state = readDb(db, (d) => ({
      tables: readTables(d),
      rows: d.prepare("SELECT count(*) AS events, count(event_at) AS dated FROM inbox WHERE verdict = 'accepted'").get(),
      indexes: d
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'inbox' AND sql IS NOT NULL ORDER BY name")
        .pluck()
        .all(),
      erasures: d.prepare('SELECT candidate_id FROM erasures').pluck().all(),
    }));
    const expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as {
      candidates: Array<{ candidate_id: string }>;
      interview_responses: Array<{ candidate_id: string }>;
    };
    expect(state.tables.candidates.map((c) => c.candidate_id).sort()).toEqual(
      [...expected.candidates.map((c) => c.candidate_id).filter((id) => id !== ERASED), 'cand-after-upgrade'].sort(),
    );
    expect(state.tables.interview_responses).toEqual(expected.interview_responses.filter((r) => r.candidate_id !== ERASED));
    // 46 events of 0.2.0 (undated: filed before the upgrade) and 2 new ones, dated.
    expect(state.rows).toEqual({ events: 48, dated: 2 });
    expect(state.indexes).toEqual([
      'inbox_by_key',
      'inbox_by_received',
      'inbox_handlers_pending',
      'inbox_identity',
      'inbox_identity_undated',
      'inbox_pending',
      'inbox_raw_sha256',
      'inbox_reconciled',
      'inbox_set_aside',
      'inbox_unsettled_by_key',
    ]);
    expect(state.erasures).toEqual([ERASED]);
    expect(await serve.stop()).toBe(0);

    // Erasure finds a person's events stored before and after the upgrade by the new index.
    const second = expected.candidates.find(
      (c) => c.candidate_id !== ERASED && lines.slice(36).some((l) => l.includes(c.candidate_id)),
    )!.candidate_id;
    const erase = await runCliProcess(['erase', '--db', db, '--candidate', second, '--reason', 'upgrade test', '--json']);
    expect(erase.code, erase.stderr).toBe(0);
    const stored = lines.filter((l) => l.includes(second)).length;
    expect(JSON.parse(erase.stdout)).toMatchObject({ candidateIds: [second], eventsRedacted: stored });
  }, 60_000);
});
