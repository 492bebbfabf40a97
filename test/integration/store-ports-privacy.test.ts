// The reads privacy/, the console and reconciliation make through store.people and
// store.projected: the same typed values on both engines, and lists of ids longer than one read.
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { ENGINES, freshStore, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';

const ids = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

describe.each(ENGINES)('the privacy and projected-row ports on $name', (engine: EngineUnderTest) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function seeded(): Promise<Store> {
    const opened = await freshStore(engine);
    close = opened.close;
    const { store } = opened;
    const sql = sqlOn(opened.database);
    // Written as a user's SQL would: the ports read what is there, whoever wrote it.
    for (const [i, id] of ids(250, 'k').entries()) {
      await sql.query("INSERT INTO candidates (candidate_id, campaign_id, is_sourced, field_versions) VALUES (?, ?, ?, '|')", [
        id,
        i < 10 ? 'c1' : 'c2',
        engine.name === 'sqlite' ? i % 2 : i % 2 === 1,
      ]);
    }
    for (const [i, id] of ids(230, 'e').entries()) {
      await sql.query('INSERT INTO erasures (candidate_id, erased_at, reason, events_redacted) VALUES (?, ?, ?, ?)', [
        id,
        new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
        'request',
        i,
      ]);
    }
    return store;
  }

  it('reads every projected candidate of a list longer than one read, booleans as booleans', async () => {
    const store = await seeded();
    const found = await store.projected.candidates([...ids(250, 'k'), 'unknown']);
    expect(found.map((c) => c.candidate_id).sort()).toEqual(ids(250, 'k'));
    expect(found.find((c) => c.candidate_id === 'k0001')?.is_sourced).toBe(true);
    expect(found.find((c) => c.candidate_id === 'k0002')?.is_sourced).toBe(false);
    expect((await store.projected.candidatesOf('c1')).map((c) => c.candidate_id).sort()).toEqual(ids(10, 'k'));
    expect((await store.projected.candidate('k0003'))?.is_sourced).toBe(true);
    expect(await store.projected.candidate('unknown')).toBeUndefined();
  });

  it('finds the erased among a list longer than one read, and reads the audit trail as numbers and ISO text', async () => {
    const store = await seeded();
    const erased = await store.people.erasedAmong([...ids(250, 'e'), 'k0001']);
    expect([...erased].sort()).toEqual(ids(230, 'e'));
    expect(await store.people.latestErasures(2)).toEqual([
      { candidate_id: 'e0229', erased_at: '2026-01-01T00:03:49.000Z', reason: 'request', events_redacted: 229 },
      { candidate_id: 'e0228', erased_at: '2026-01-01T00:03:48.000Z', reason: 'request', events_redacted: 228 },
    ]);
    expect(await store.people.erasuresOf('e0007')).toEqual([
      { candidate_id: 'e0007', erased_at: '2026-01-01T00:00:07.000Z', reason: 'request', events_redacted: 7 },
    ]);
  });

  it('pages the candidates with their field versions in id order', async () => {
    const store = await seeded();
    const first = await store.people.candidateVersions('', 3);
    expect(first).toEqual(ids(3, 'k').map((candidate_id) => ({ candidate_id, field_versions: '|' })));
    expect((await store.people.candidateVersions('k0248', 5)).map((r) => r.candidate_id)).toEqual(['k0249']);
  });
});
