// Erasure of a candidate (docs/projection.md section 8 / docs/projection.md section 8) on every engine:
// what is deleted, what is redacted, what later events may and may not do, and rebuild.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, ErasureRequestError, UnknownCandidateError, type Receiver } from '../../src/index.js';
import { rebuild } from '../../src/replay/index.js';
import { storePorts } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';
import { readStoreTables as snapshot } from '../support/tables.js';
import { waitFor } from '../support/wait-for.js';
import { received } from '../support/bodies.js';

const K = 'cand-erased-1';
const OTHER = 'cand-kept-2';
const CAMPAIGN = 'cmp_erasure';
const PII = {
  email: 'Jeanne.Erased@Example.org',
  phone: '+33611223344',
  first_name: 'Jeanne',
  last_name: 'Effacée',
  salary_expectation: '14,20 €/h secret',
  answer: 'Je travaille chez Transports Dupuis depuis 2019, réponse très personnelle. '.repeat(80), // > 4 KB: overflow pages
};

/** The events of the two candidates, dated well before any erasure. */
function history() {
  return [
    sampleEvent('campaign.created', { timestamp: '2026-01-10T09:00:00Z', data: { campaign_id: CAMPAIGN } }),
    sampleEvent('candidate.added', {
      timestamp: '2026-01-10T09:01:00Z',
      data: {
        campaign_id: CAMPAIGN,
        candidate_id: K,
        first_name: PII.first_name,
        last_name: PII.last_name,
        email: PII.email,
        phone: PII.phone,
      },
    }),
    sampleEvent('candidate.interview.completed.extended', {
      timestamp: '2026-01-11T09:00:00Z',
      data: {
        campaign_id: CAMPAIGN,
        candidate_id: K,
        first_name: PII.first_name,
        last_name: PII.last_name,
        email: PII.email,
        phone: PII.phone,
        salary_expectation: PII.salary_expectation,
        interview_score: 8,
        responses: [{ question: 'Votre parcours ?', answer: PII.answer, score: 8, explanation: 'ok' }],
      },
    }),
    sampleEvent('candidate.added', {
      timestamp: '2026-01-10T09:02:00Z',
      data: { campaign_id: CAMPAIGN, candidate_id: OTHER, email: 'kept@example.org' },
    }),
    // Set aside: a dead letter (invalid data) and an unknown kind that carry the person's contact.
    {
      event: 'candidate.added',
      timestamp: '2026-01-10T09:03:00Z',
      data: { campaign_id: CAMPAIGN, candidate_id: K, email: PII.email, call_queued: 'maybe' },
    },
    { event: 'candidate.contacted', timestamp: '2026-01-10T09:04:00Z', data: { campaign_id: CAMPAIGN, note: `called ${PII.phone}` } },
  ];
}

/** Every erased string the history carries, as it carries them (the lower-cased e-mail aside). */
const CARRIED = [PII.email, PII.phone, PII.first_name, PII.last_name, PII.salary_expectation, 'Transports Dupuis'];
const leaks = (text: string) =>
  [PII.email, PII.email.toLowerCase(), PII.phone, PII.first_name, PII.last_name, PII.salary_expectation, 'Transports Dupuis'].filter((s) =>
    text.includes(s),
  );

describe.each(ENGINES)('erasing a candidate on $name', (engine: EngineUnderTest) => {
  let receiver: Receiver | undefined;
  let database = '';
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  async function started(): Promise<{ receiver: Receiver; database: string }> {
    ({ database } = await engine.fresh());
    receiver = createReceiver({ database, allowUnsigned: true });
    await receiver.replay(history());
    await receiver.drain();
    return { receiver, database };
  }

  async function inboxBodies(): Promise<string> {
    const rows = await sqlOn(database).query<{ raw: Uint8Array; codec: number | null }>('SELECT raw, codec FROM inbox');
    return rows.map((row) => received(row).toString('utf8')).join('\n');
  }

  it('deletes the row and responses, redacts every event naming the person, keeps identity, and records the erasure without personal data', async () => {
    const { receiver: r } = await started();
    const sql = sqlOn(database);
    const identities = await sql.query<{ inbox_id: number; identity: string | null; kind: string | null; state: string }>(
      'SELECT inbox_id, identity, kind, state FROM inbox ORDER BY inbox_id',
    );
    expect(leaks(await inboxBodies())).toEqual(CARRIED);

    const report = await r.erase({ email: PII.email.toUpperCase() }, { reason: 'GDPR request #42' });
    expect(report).toMatchObject({ candidateIds: [K], eventsRedacted: 4, dryRun: false });
    expect(JSON.stringify(report)).not.toMatch(/Jeanne|Example|\+336/i);

    expect(await r.query.getCandidate(K)).toBeUndefined();
    expect((await r.query.getCampaign(CAMPAIGN))?.stats.total_candidates).toBe(1);
    expect(await sql.query('SELECT * FROM interview_responses WHERE candidate_id = ?', [K])).toEqual([]);
    expect(leaks(await inboxBodies())).toEqual([]);
    // Kind, state and identity kept: a redelivery is still a duplicate.
    expect(await sql.query('SELECT inbox_id, identity, kind, state FROM inbox ORDER BY inbox_id')).toEqual(identities);
    const erasures = await sql.query<{ candidate_id: string; reason: string; events_redacted: number; erased_at: unknown }>(
      'SELECT candidate_id, reason, events_redacted, erased_at FROM erasures',
    );
    expect(erasures).toHaveLength(1);
    expect(erasures[0]).toMatchObject({ candidate_id: K, reason: 'GDPR request #42' });
    expect(Number(erasures[0]!.events_redacted)).toBe(4);
    expect(leaks(JSON.stringify(erasures))).toEqual([]);
    // The person's events keep their keys only.
    const exported = await r.exportCandidate(K);
    expect(exported.candidate).toBeNull();
    expect(exported.erasures).toHaveLength(1);
    // Instants as ISO text on both engines (PostgreSQL's timestamps are read as text, never as Date).
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    expect(
      [exported.erasures[0]!.erased_at, ...exported.events.flatMap((e) => [e.received_at, e.processed_at])].filter(
        (at) => !iso.test(String(at)),
      ),
    ).toEqual([]);
    expect(exported.events.map((e) => e.body)).toContainEqual({
      event: 'candidate.added',
      timestamp: '2026-01-10T09:01:00Z',
      data: { campaign_id: CAMPAIGN, candidate_id: K },
    });
    expect(leaks(JSON.stringify(exported))).toEqual([]);
    // The feed: their changes reduced to keys, closed by one erase, and nothing of them left in it.
    expect(exported.changes.at(-1)).toMatchObject({ entity: 'candidate', id: K, op: 'erase', row: null });
    expect(exported.changes.filter((c) => c.op === 'upsert').map((c) => Object.keys(c.row).sort())).toContainEqual([
      'campaign_id',
      'candidate_id',
    ]);
    expect(leaks(JSON.stringify(await sql.query('SELECT * FROM changes')))).toEqual([]);
  });

  it('after the erasure: redeliveries are duplicates, late events and reconciliation change nothing and are redacted, a newer webhook is a new contact, rebuild agrees', async () => {
    const { receiver: r } = await started();
    const before = await r.exportCandidate(K);
    expect(before.candidate?.email).toBe(PII.email);
    expect(before.interview_responses).toHaveLength(1);
    expect(before.changes.some((c) => c.entity === 'candidate' && c.row !== null && 'email' in c.row && c.row.email === PII.email)).toBe(
      true,
    );
    await r.erase({ candidateId: K }, { reason: 'retention' });
    const store = await r.store();
    const erased = await snapshot(database);

    const again = await r.replay(history());
    expect(again.duplicates).toBe(history().length);
    const late = [
      sampleEvent('candidate.interview.started', {
        timestamp: '2026-01-12T09:00:00Z',
        data: { campaign_id: CAMPAIGN, candidate_id: K, first_name: PII.first_name },
      }),
      {
        event: 'reconcile.candidate',
        timestamp: '2099-01-01T00:00:00Z',
        data: { campaign_id: CAMPAIGN, candidate_id: K, email: PII.email, status: 'completed' },
      },
    ];
    await r.replay(late);
    await r.drain();
    expect(await snapshot(database)).toEqual(erased);
    expect(leaks(await inboxBodies())).toEqual([]);

    const newContact = sampleEvent('candidate.added', {
      timestamp: '2099-06-01T00:00:00Z',
      data: { campaign_id: CAMPAIGN, candidate_id: K, email: 'new.address@example.org', first_name: 'J.' },
    });
    await r.replay([newContact]);
    await r.drain();
    const back = await r.query.getCandidate(K);
    expect(back).toMatchObject({
      candidate_id: K,
      email: 'new.address@example.org',
      first_name: 'J.',
      salary_expectation: null,
      interview_score: null,
      status: 'pending',
    });
    expect(back?.responses ?? []).toEqual([]);

    const state = await snapshot(database);
    await rebuild(store);
    expect(await snapshot(database)).toEqual(state);
    await rebuild(store, { bulk: false });
    expect(await snapshot(database)).toEqual(state);
  });

  it("finds and redacts the candidate's changes however far apart in the feed (a lookup probes each block of 1,024)", async () => {
    const { receiver: r } = await started();
    const others = Array.from({ length: 1100 }, (_, i) =>
      sampleEvent('candidate.added', {
        timestamp: '2026-01-10T10:00:00Z',
        data: { campaign_id: CAMPAIGN, candidate_id: `cand-filler-${i}` },
      }),
    );
    await r.replay(others);
    await r.replay([
      sampleEvent('candidate.interview.started', {
        timestamp: '2026-01-12T09:00:00Z',
        data: { campaign_id: CAMPAIGN, candidate_id: K, first_name: PII.first_name, email: PII.email },
      }),
    ]);
    await r.drain();
    const seqs = (await r.exportCandidate(K)).changes.map((c) => c.seq);
    expect(seqs[0]).toBeLessThan(1024);
    expect(seqs.at(-1)).toBeGreaterThan(1100);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    await r.erase({ candidateId: K }, { reason: 'GDPR request #43' });
    const changes = await sqlOn(database).query<{ seq: number; row: string | null }>(
      "SELECT seq, row FROM changes WHERE entity = 'candidate' AND id = ?",
      [K],
    );
    expect(changes.map((c) => Number(c.seq)).slice(0, seqs.length)).toEqual(seqs);
    expect(leaks(JSON.stringify(changes))).toEqual([]);
  });

  it('refuses an unknown candidate, e-mail or phone and a missing reason, changing nothing', async () => {
    const { receiver: r } = await started();
    const state = await snapshot(database);
    await expect(r.erase({ candidateId: 'nobody' }, { reason: 'x' })).rejects.toBeInstanceOf(UnknownCandidateError);
    await expect(r.erase({ email: 'nobody@example.org' }, { reason: 'x' })).rejects.toThrow(/no candidate has that e-mail/);
    await expect(r.erase({ phone: '+33600000000' }, { reason: 'x' })).rejects.toBeInstanceOf(UnknownCandidateError);
    await expect(r.erase({ candidateId: K }, { reason: ' ' })).rejects.toBeInstanceOf(ErasureRequestError);
    expect(await snapshot(database)).toEqual(state);
    expect(await sqlOn(database).query('SELECT * FROM erasures')).toEqual([]);
  });

  // Replicas project concurrently: a projection that read no tombstone must commit before the
  // erasure deletes, or it would leave the person's row behind it. (SQLite has one writer: not
  // defined there rather than skipped, so that a skip in a CI run means something went untested.)
  if (engine.name === 'postgres') {
    it('waits for a projection that read no tombstone, and the next projection sees the erasure', async () => {
      const { receiver: r, database } = await started();
      const store = storePorts(await r.store());
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let read: Map<string, number> | undefined;
      const projecting = store.write(async (tx) => {
        read = await tx.erasures([K]);
        await held;
      });
      await waitFor(() => read !== undefined, 10_000, 'the projection to read the tombstones');
      let erased = false;
      const erasing = r.erase({ candidateId: K }, { reason: 'race' }).then(() => (erased = true));
      // The erasure waits on the projection's lock: PostgreSQL shows a backend of this database
      // blocked on a lock, and the erasure has not finished.
      const blocked = () =>
        sqlOn(database).query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      await waitFor(async () => (await blocked()).length > 0, 10_000, "the erasure to wait for the projection's lock");
      expect(erased).toBe(false);
      release();
      await projecting;
      await erasing;
      expect(read?.size).toBe(0);
      expect((await store.write((tx) => tx.erasures([K]))).has(K)).toBe(true);
    });
  }
});

describe('erasure on SQLite, on disk', () => {
  it('leaves none of the erased strings in the database file or its WAL while the receiver keeps it open', async () => {
    const sqlite = ENGINES.find((e) => e.name === 'sqlite')!;
    const { database } = await sqlite.fresh();
    const receiver = createReceiver({ database, allowUnsigned: true });
    try {
      await receiver.replay(history());
      await receiver.drain();
      const files = () =>
        [database, `${database}-wal`]
          .map((f) => {
            try {
              return readFileSync(f).toString('latin1') + readFileSync(f).toString('utf8');
            } catch {
              return '';
            }
          })
          .join('');
      expect(leaks(files())).toEqual(CARRIED);
      const report = await receiver.erase({ phone: PII.phone }, { reason: 'request' });
      expect(report.scrubbed).toBe(true);
      expect(leaks(files())).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe.each(ENGINES)('retention on $name', (engine: EngineUnderTest) => {
  it('erases the candidates not heard of for the given age, and the rows set aside received before it; keeps the others', async () => {
    const { database } = await engine.fresh();
    const store = await (await import('../../src/store/open.js')).openStore(database);
    const sql = sqlOn(database);
    try {
      const { replayInto } = await import('../../src/replay/index.js');
      const { eraseInactive } = await import('../../src/privacy/index.js');
      const day = 86_400_000;
      const old = Date.parse('2023-06-01T00:00:00Z');
      const recent = Date.now() - day;
      const at = (ms: number) => new Date(ms).toISOString();
      await replayInto({ store, now: () => old }, [
        sampleEvent('candidate.added', {
          timestamp: at(old),
          data: { campaign_id: CAMPAIGN, candidate_id: 'cand-old', email: 'old.person@example.org' },
        }),
        { event: 'candidate.contacted', timestamp: at(old), data: { note: 'Paul Ancien asked to be called back' } },
      ]);
      await replayInto({ store, now: () => recent }, [
        sampleEvent('candidate.added', {
          timestamp: at(recent),
          data: { campaign_id: CAMPAIGN, candidate_id: 'cand-recent', email: 'recent.person@example.org' },
        }),
        { event: 'candidate.contacted', timestamp: at(recent), data: { note: 'recent.person@example.org called' } },
      ]);
      const dry = await eraseInactive(store, { olderThan: 730 * day, dryRun: true });
      expect(dry).toMatchObject({ dryRun: true, candidatesErased: 1, candidateIds: ['cand-old'], setAsideRedacted: 1 });
      expect((await sql.query('SELECT * FROM erasures')).length).toBe(0);

      const report = await eraseInactive(store, { olderThan: 730 * day });
      expect(report).toMatchObject({
        dryRun: false,
        candidatesErased: 1,
        candidateIds: ['cand-old'],
        eventsRedacted: 1,
        setAsideRedacted: 1,
      });
      const ids = (await sql.query<{ candidate_id: string }>('SELECT candidate_id FROM candidates ORDER BY candidate_id')).map(
        (r) => r.candidate_id,
      );
      expect(ids).toEqual(['cand-recent']);
      expect((await sql.query<{ reason: string }>('SELECT reason FROM erasures')).map((r) => r.reason)).toEqual(['retention']);
      const bodies = (await sql.query<{ raw: Uint8Array; codec: number | null }>('SELECT raw, codec FROM inbox'))
        .map((r) => received(r).toString('utf8'))
        .join('\n');
      expect(bodies).not.toContain('old.person@example.org');
      expect(bodies).not.toContain('Paul Ancien');
      expect(bodies).toContain('recent.person@example.org');
      expect(await eraseInactive(store, { olderThan: 730 * day })).toMatchObject({ candidatesErased: 0, setAsideRedacted: 0 });
    } finally {
      await store.close();
    }
  });
});
