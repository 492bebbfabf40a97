// A database made by release 0.3.0 (schema 13, before accounts) upgraded in place: every row
// becomes the default account's as it was, nothing is projected again, every stored event is still
// a duplicate, and the rows left pending get projected. Made by
// test/fixtures/databases/make-release-database.mjs with that release's package: 36 events received
// and projected, the first candidate erased, a dead letter, and 10 events stored pending.
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readEnvelope } from '../../src/events/index.js';
import { eraseCandidate } from '../../src/privacy/index.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { replayInto } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import { tempDir } from '../support/servers.js';
import { readStoreTables } from '../support/tables.js';

const RELEASE_DB = new URL('../fixtures/databases/0.3.0.db', import.meta.url);
const SCENARIO = new URL('../../fixtures/scenarios/campaign-lifecycle.ndjson', import.meta.url);
const ERASED = 'f332892f-d38e-44df-8ebf-7c9f49065885';
const lines = readFileSync(SCENARIO, 'utf8').trim().split('\n');

type Rows = Record<string, unknown>[];
const ACCOUNT_TABLES = ['inbox', 'handler_failures', 'erasures', 'campaigns', 'candidates', 'interview_responses', 'credits'];

/** What the upgrade must keep as it was: inbox rows and their states, projected rows and their field versions. */
function snapshot(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    const all = (sql: string) => db.prepare(sql).all() as Rows;
    // Bodies as received, whichever form they are stored in (before the upgrade: no codec column).
    const codec = db.prepare("SELECT 1 FROM pragma_table_info('inbox') WHERE name = 'codec'").get() === undefined ? 'NULL' : 'codec';
    return {
      inbox: all(
        `SELECT inbox_id, state, raw, ${codec} AS codec, identity, event_at, reasons, attempts, processed_at, handlers_pending FROM inbox ORDER BY inbox_id`,
      ).map(({ codec: stored, ...row }): Rows[number] => ({
        ...row,
        raw: received({ raw: row.raw as Buffer, codec: stored as number | null }),
        // Stored as its 32 bytes since migration 24: read as hex.
        identity: identityText(row.identity),
        // Unix ms since migration 26: read as ISO text.
        processed_at: instantText(row.processed_at),
      })),
      campaigns: all('SELECT campaign_id, job_title, status, field_versions FROM campaigns ORDER BY campaign_id'),
      candidates: all('SELECT candidate_id, campaign_id, status, interview_score, field_versions FROM candidates ORDER BY candidate_id'),
      responses: all('SELECT candidate_id, position, question FROM interview_responses ORDER BY candidate_id, position'),
      erasures: all('SELECT erasure_id, candidate_id, erased_at, events_redacted FROM erasures ORDER BY erasure_id'),
    };
  } finally {
    db.close();
  }
}

import { projectPending } from '../support/project.js';
import { received } from '../support/bodies.js';
import { identityText } from '../../src/store/identities.js';
import { instantText } from '../../src/store/instants.js';

describe('a database made by release 0.3.0', () => {
  const tmp = tempDir('prequal-hooks-accounts-upgrade-');
  afterAll(() => tmp.cleanup());

  it("keeps every row as the default account's, projects nothing again, and still knows every event", async () => {
    const path = join(tmp.dir, 'release.db');
    copyFileSync(RELEASE_DB, path);
    const before = snapshot(path);
    expect(before.inbox.filter((row) => row.state === 'pending')).toHaveLength(10);

    const store = await openStore(path);
    try {
      const after = snapshot(path);
      expect(after).toEqual(before);
      const db = new Database(path, { readonly: true });
      for (const table of ACCOUNT_TABLES) {
        expect(db.prepare(`SELECT DISTINCT account FROM ${table}`).pluck().all(), table).toEqual(
          table === 'handler_failures' || table === 'credits' ? [] : [DEFAULT_ACCOUNT],
        );
      }
      expect(db.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBeGreaterThanOrEqual(14);
      db.close();
      expect(await store.accountsWithWork()).toEqual({ projection: [DEFAULT_ACCOUNT], handlers: [] });

      // Every event the release stored, delivered again: a duplicate (the erased person's too).
      const bodies = [...lines, 'not json at all'].map((line) => Buffer.from(line));
      const again = await store.write((tx) =>
        tx.append(bodies.map((body) => deliveryOf(DEFAULT_ACCOUNT, body, readEnvelope(body), new Date().toISOString(), null))),
      );
      expect(again.filter((outcome) => !outcome.duplicate)).toEqual([]);

      // The rows left pending are projected: the state of every event, the erased person kept erased.
      await projectPending(store);
      expect(await store.counts()).toMatchObject({ pending: 0, projected: 46, dead: 1 });
      expect(await store.projected.candidate(ERASED)).toBeUndefined();
      expect(await store.accountsWithWork()).toEqual({ projection: [], handlers: [] });
      expect(await readStoreTables(path)).toEqual(await freshState());
    } finally {
      await store.close();
    }
  });

  /** The same events into a new database, the same candidate erased. */
  async function freshState() {
    const fresh = join(tmp.dir, 'fresh.db');
    const store = await openStore(fresh);
    try {
      await replayInto({ store }, fileURLToPath(SCENARIO));
      await eraseCandidate(store, { candidateId: ERASED }, { reason: 'comparison' });
    } finally {
      await store.close();
    }
    return readStoreTables(fresh);
  }
});
