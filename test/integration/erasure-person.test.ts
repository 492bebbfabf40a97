// Erasure of a person rather than of one row (docs/projection.md section 8), on every engine: all their
// candidate ids found by e-mail or phone, whatever the case or spacing; the rows set aside matched
// by value (never a neighbour's longer value); reasons that quote a body redacted with it; export
// listing exactly what an erasure redacts; rebuild keeping redacted dead letters dead; retention
// reaching a candidate whose row carries no field versions.
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, eraseInactive, type Receiver } from '../../src/index.js';
import { rebuild } from '../../src/replay/index.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';
import { readStoreTables as snapshot } from '../support/tables.js';
import { received } from '../support/bodies.js';

const FIRST = 'cand-person-a';
const SECOND = 'cand-person-b';
const NEIGHBOUR = 'cand-neighbour';
const EMAIL = 'jeanne.martin@example.org';
const PHONE = '+33655501234';

const added = (candidate_id: string, campaign_id: string, at: string, contact: { email: string; phone: string }) =>
  sampleEvent('candidate.added', {
    timestamp: at,
    data: { campaign_id, candidate_id, first_name: 'Jeanne', last_name: 'Martin', ...contact },
  });

/** One person who applied twice (e-mail in two cases, phone in two spellings), and a neighbour. */
function history() {
  return [
    added(FIRST, 'cmp_a', '2026-03-01T09:00:00Z', { email: 'Jeanne.Martin@Example.org', phone: '06 55 50 12 34' }),
    added(SECOND, 'cmp_b', '2026-03-02T09:00:00Z', { email: EMAIL, phone: PHONE }),
    added(NEIGHBOUR, 'cmp_a', '2026-03-03T09:00:00Z', { email: `x${EMAIL}`, phone: '+33655509999' }),
  ];
}

/** Bodies as sent, byte for byte: what the inbox keeps of a request. */
const BODIES = {
  // A dead letter (call_queued is not a boolean) of the neighbour, whose e-mail contains the person's.
  neighbourDead: `{"event":"candidate.added","timestamp":"2026-03-04T09:00:00Z","data":{"campaign_id":"cmp_a","candidate_id":"${NEIGHBOUR}","email":"x${EMAIL}","call_queued":"maybe"}}`,
  // The person's unknown-kind event, naming them by contact only: e-mail escaped, phone spaced.
  unknownKind: `{"event":"candidate.contacted","timestamp":"2026-03-05T09:00:00Z","data":{"campaign_id":"cmp_a","contact":{"mail":"jeanne.martin\\u0040example.org","tel":["06 55 50 12 34"]}}}`,
  // Not JSON, naming the phone: the parser's error quotes it into the stored reasons.
  notJson: `{"event":"candidate.added","timestamp":"2026-03-06T09:00:00Z","data":{"campaign_id":"cmp_a","phone":+33655501234}}`,
  // A dead letter naming the first id (invalid data): it stays dead through every rebuild.
  ownDead: `{"event":"candidate.interview.failed","timestamp":"2026-03-07T09:00:00Z","data":{"campaign_id":"cmp_a","candidate_id":"${FIRST}","failure_reason":"asleep"}}`,
};

// The parser's error quotes a part of the body: `…"phone":+336555012"…`.
const hasPhone = (text: string) => /55\D?50\D?12\D?34|\+336555012/.test(text);

describe.each(ENGINES)('erasing a person on $name', (engine: EngineUnderTest) => {
  let receiver: Receiver | undefined;
  let database = '';
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  async function started(): Promise<Receiver> {
    ({ database } = await engine.fresh());
    receiver = createReceiver({ database, allowUnsigned: true });
    await receiver.replay(history());
    for (const body of Object.values(BODIES))
      await receiver.receive({ rawBody: Buffer.from(body), headers: { 'content-type': 'application/json' } });
    await receiver.drain();
    return receiver;
  }

  async function inbox() {
    const rows = await sqlOn(database).query<{
      inbox_id: number | string;
      raw: Uint8Array;
      codec: number | null;
      state: string;
      reasons: string | null;
    }>('SELECT inbox_id, raw, codec, state, reasons FROM inbox ORDER BY inbox_id');
    return rows.map((row) => ({
      inboxId: Number(row.inbox_id),
      text: received(row).toString('utf8'),
      state: row.state,
      reasons: row.reasons,
    }));
  }
  const rowOf = (rows: Awaited<ReturnType<typeof inbox>>, body: string) => rows.find((row) => row.text === body);

  it.each([
    ['e-mail in another case', { email: 'JEANNE.MARTIN@example.ORG' }],
    ['phone in another spacing', { phone: '06 55 50 12 34' }],
    ['phone in the national form', { phone: '0655501234' }],
  ])(
    'by %s: every candidate id of the person is erased and listed; the dry run lists them first and changes nothing',
    async (_how, match) => {
      const r = await started();
      const [tables, rows] = [await snapshot(database), await inbox()];
      expect(rows.some((row) => hasPhone(row.text))).toBe(true);

      const dry = await r.erase(match, { reason: 'request', dryRun: true });
      expect(dry).toMatchObject({ candidateIds: [FIRST, SECOND], dryRun: true, scrubbed: false });
      expect(await snapshot(database)).toEqual(tables);
      expect(await inbox()).toEqual(rows);
      expect(await sqlOn(database).query('SELECT * FROM erasures')).toEqual([]);

      const report = await r.erase(match, { reason: 'request' });
      expect(report).toMatchObject({ candidateIds: [FIRST, SECOND], dryRun: false, eventsRedacted: dry.eventsRedacted });
      expect(JSON.stringify(report)).not.toMatch(/jeanne|martin|5550/i);
      expect((await snapshot(database)).candidates.map((c) => c.candidate_id)).toEqual([NEIGHBOUR]);
      const erasures = await sqlOn(database).query<{ candidate_id: string }>('SELECT candidate_id FROM erasures ORDER BY candidate_id');
      expect(erasures.map((e) => e.candidate_id)).toEqual([FIRST, SECOND]);
      const after = await inbox();
      expect(
        after.filter(
          (row) =>
            hasPhone(row.text) ||
            hasPhone(row.reasons ?? '') ||
            /jeanne\.martin(@|\\u0040)example/i.test(row.text.replace(`x${EMAIL}`, '')),
        ),
      ).toEqual([]);
    },
  );

  it('matches values, never substrings: the neighbour keeps their rows; the escaped, spaced and non-JSON rows of the person are redacted, reasons included', async () => {
    const r = await started();
    const before = await inbox();
    expect(hasPhone(rowOf(before, BODIES.notJson)!.reasons!)).toBe(true);
    // The second id's e-mail is exactly what the neighbour's holds after an `x`.
    await r.erase({ candidateId: SECOND }, { reason: 'request' });
    const after = await inbox();

    const neighbour = before.filter((row) => row.text.includes(NEIGHBOUR));
    expect(neighbour).toHaveLength(2);
    for (const row of neighbour) expect(after.find((a) => a.inboxId === row.inboxId)).toEqual(row);

    const unknown = after.find((a) => a.inboxId === rowOf(before, BODIES.unknownKind)!.inboxId)!;
    expect(JSON.parse(unknown.text)).toEqual({
      event: 'candidate.contacted',
      timestamp: '2026-03-05T09:00:00Z',
      data: { campaign_id: 'cmp_a' },
    });
    expect(unknown.state).toBe('unknown');
    const notJson = after.find((a) => a.inboxId === rowOf(before, BODIES.notJson)!.inboxId)!;
    expect(notJson).toMatchObject({ text: '{"redacted":true}', state: 'dead' });
    expect(notJson.reasons).not.toMatch(/6555|\+33/);
  });

  it('export of a candidate lists exactly the rows its erasure redacts, and its projected row', async () => {
    const r = await started();
    const exported = await r.exportCandidate(FIRST);
    expect(exported.candidate).toMatchObject({ candidate_id: FIRST, email: 'Jeanne.Martin@Example.org' });
    const before = await inbox();
    await r.erase({ candidateId: FIRST }, { reason: 'request' });
    const after = await inbox();
    const redacted = after.filter((row, i) => row.text !== before[i]!.text).map((row) => row.inboxId);
    expect(exported.events.map((e) => e.inbox_id)).toEqual(redacted);
    // Its own events, the unknown kind naming its contact, the body that is not JSON, its dead letter.
    expect(redacted).toEqual([1, ...[BODIES.unknownKind, BODIES.notJson, BODIES.ownDead].map((body) => rowOf(before, body)!.inboxId)]);
    expect(rowOf(after, BODIES.neighbourDead)).toBeDefined();
  });

  it('rebuild after the erasure keeps its dead letters dead (and every other row as it was)', async () => {
    const r = await started();
    const dead = rowOf(await inbox(), BODIES.ownDead)!;
    expect(dead.state).toBe('dead');
    await r.erase({ candidateId: FIRST }, { reason: 'request' });
    const store = await r.store();
    const states = (await inbox()).map(({ inboxId, state, reasons }) => ({ inboxId, state, reasons }));
    expect(states.find((s) => s.inboxId === dead.inboxId)?.state).toBe('dead');
    const tables = await snapshot(database);
    await rebuild(store);
    expect((await inbox()).map(({ inboxId, state, reasons }) => ({ inboxId, state, reasons }))).toEqual(states);
    expect(await snapshot(database)).toEqual(tables);
    await rebuild(store, { bulk: false });
    expect((await inbox()).map(({ inboxId, state, reasons }) => ({ inboxId, state, reasons }))).toEqual(states);
    expect(await snapshot(database)).toEqual(tables);
  });
});

describe.each(ENGINES)('retention on $name', (engine: EngineUnderTest) => {
  it('reaches a candidate whose row carries no field versions, by the dates of its events', async () => {
    const { database } = await engine.fresh();
    const receiver = createReceiver({ database, allowUnsigned: true });
    try {
      const day = 86_400_000;
      const recent = new Date(Date.now() - day).toISOString();
      await receiver.replay([
        added('cand-old-unversioned', 'cmp_r', '2023-01-01T00:00:00Z', { email: 'old@example.org', phone: '+33600000001' }),
        added('cand-recent-unversioned', 'cmp_r', recent, { email: 'recent@example.org', phone: '+33600000002' }),
      ]);
      await receiver.drain();
      const store = await receiver.store();
      const sql = sqlOn(database);
      await sql.query(`UPDATE candidates SET field_versions = '|'`);
      // Written by hand: nothing says it was ever heard of.
      await sql.query(`INSERT INTO candidates (candidate_id, email) VALUES ('cand-by-hand', 'hand@example.org')`);
      const report = await eraseInactive(store, { olderThan: 730 * day });
      expect(report).toMatchObject({ candidateIds: ['cand-by-hand', 'cand-old-unversioned'], eventsRedacted: 1 });
      expect((await sql.query<{ candidate_id: string }>('SELECT candidate_id FROM candidates')).map((c) => c.candidate_id)).toEqual([
        'cand-recent-unversioned',
      ]);
    } finally {
      await receiver.close();
    }
  });
});
