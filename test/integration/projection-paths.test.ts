// The five paths that project (the dispatcher, replay batched and bulk, rebuild bulk and batched)
// give the same inbox and the same tables for the same bodies: valid, dead, unknown, an erased
// candidate's late event (projected with no effect, its body redacted) and a dead letter naming
// them (redacted, reasons and all). Each path settles through src/project/settlement.ts; this
// catches one that drifts (a settlement that forgets the redacted body, say).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHandlerRegistry } from '../../src/dispatch/handlers.js';
import { createProjectionLoop } from '../../src/dispatch/projection-loop.js';
import { REDACTED_REASONS, redactedBody } from '../../src/events/index.js';
import { rebuild, replayInto } from '../../src/replay/index.js';
import type { Store } from '../../src/store/store.js';
import { sampleEvent } from '../../src/testing/index.js';
import { ENGINES, freshStore, type EngineUnderTest } from '../support/engines.js';
import { sqlOn } from '../support/sql.js';
import { readStoreTables } from '../support/tables.js';
import { received } from '../support/bodies.js';

const K = 'cand-erased';
const body = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const BODIES = [
  body(sampleEvent('campaign.created', { data: { campaign_id: 'cmp-1' } })),
  body(sampleEvent('candidate.added', { data: { campaign_id: 'cmp-1', candidate_id: 'cand-1' } })),
  body(sampleEvent('candidate.interview.completed', { data: { candidate_id: 'cand-1', interview_score: 'ten' } })), // dead
  body({ event: 'candidate.teleported', timestamp: '2026-11-20T10:00:00Z', data: { candidate_id: 'cand-1' } }), // unknown
  body(sampleEvent('candidate.added', { data: { campaign_id: 'cmp-2', candidate_id: K } })), // late: erased after
  body(sampleEvent('candidate.interview.completed', { data: { candidate_id: K, interview_score: 'ten' } })), // a dead letter naming K
  body('not an envelope'),
];
const WANTED = new Set(['candidate.added']);
// Replay reads bodies as given from an NDJSON file (a line that is not JSON included).
const FILE = join(mkdtempSync(join(tmpdir(), 'paths-')), 'bodies.ndjson');
writeFileSync(FILE, BODIES.map((b) => b.toString('utf8')).join('\n') + '\n', { mode: 0o600 });
afterAll(() => rmSync(dirname(FILE), { recursive: true, force: true }));
const wantsHandlers = (kind: string) => WANTED.has(kind);

/** Erased after every body's date (all in November 2026), before any arrives: what `erase` records. */
async function eraseK(database: string): Promise<void> {
  await sqlOn(database).query('INSERT INTO erasures (candidate_id, erased_at, reason, events_redacted) VALUES (?, ?, ?, ?)', [
    K,
    '2026-12-01T00:00:00.000Z',
    'test',
    0,
  ]);
}

/** Stored pending, as the intake stores webhooks. */
const enqueue = (store: Store) => replayInto({ store }, FILE, { enqueue: true });

type Path = { name: string; bulkOnly?: boolean; rebuilds?: boolean; run: (store: Store) => Promise<void> };
const PATHS: Path[] = [
  {
    name: 'dispatcher',
    async run(store) {
      await enqueue(store);
      const handlers = createHandlerRegistry();
      for (const kind of WANTED) handlers.on(kind as 'candidate.added', () => undefined);
      const stopping = new AbortController();
      const loop = createProjectionLoop(
        { store, handlers, logger: { warn: () => {} }, now: Date.now, stopping: stopping.signal, handlersDue: () => {} },
        { batchSize: 3 },
      );
      loop.notify();
      await loop.onIdle();
      stopping.abort();
    },
  },
  {
    name: 'replay, batched',
    run: async (store) => void (await replayInto({ store, wantsHandlers }, FILE, { bulk: false, batchSize: 3 })),
  },
  {
    name: 'replay, bulk into an empty database',
    bulkOnly: true,
    async run(store) {
      let bulk = false;
      await replayInto({ store, wantsHandlers }, FILE, { batchSize: 3, onProgress: (_, progress) => (bulk ||= progress.bulk) });
      expect(bulk).toBe(true);
    },
  },
  {
    name: 'rebuild, bulk',
    bulkOnly: true,
    rebuilds: true,
    run: async (store) => void (await enqueue(store), await rebuild(store, { batchSize: 3 })),
  },
  {
    name: 'rebuild, batched',
    rebuilds: true,
    run: async (store) => void (await enqueue(store), await rebuild(store, { bulk: false, batchSize: 3 })),
  },
];

async function inbox(database: string) {
  const rows = await sqlOn(database).query<{
    raw: Uint8Array;
    codec: number | null;
    state: string;
    reasons: string | null;
    handlers_pending: boolean | number;
  }>('SELECT raw, codec, state, reasons, handlers_pending FROM inbox ORDER BY inbox_id');
  return rows.map((row) => ({
    raw: received(row).toString('utf8'),
    state: row.state,
    reasons: row.reasons === null ? null : (JSON.parse(row.reasons) as unknown),
    handlers: row.handlers_pending === true || row.handlers_pending === 1,
  }));
}

describe.each(ENGINES)('on $name: every projection path settles alike', (engine: EngineUnderTest) => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  async function through(path: Path) {
    const { store, database, close } = await freshStore(engine);
    closers.push(close);
    await eraseK(database);
    await path.run(store);
    return { inbox: await inbox(database), tables: await readStoreTables(database) };
  }

  const paths = PATHS.filter((path) => !path.bulkOnly || engine.name === 'sqlite');

  it("the dispatcher: the erased candidate's late event projected with no effect, redacted; the dead letter naming them redacted", async () => {
    const { inbox: rows, tables } = await through(PATHS[0]!);
    expect(rows.map((r) => r.state)).toEqual(['projected', 'projected', 'dead', 'unknown', 'projected', 'dead', 'dead']);
    expect(rows.map((r) => r.handlers)).toEqual([false, true, false, false, false, false, false]);
    expect(rows[4]!.raw).toBe(Buffer.from(redactedBody(BODIES[4]!)).toString('utf8'));
    expect(rows[4]!.raw).not.toContain('first_name');
    expect(rows[5]).toMatchObject({ raw: Buffer.from(redactedBody(BODIES[5]!)).toString('utf8'), reasons: REDACTED_REASONS });
    expect(rows[2]!.reasons).not.toEqual(REDACTED_REASONS);
    expect(tables.campaigns.map((c) => c.campaign_id)).toEqual(['cmp-1', 'cmp-2']);
    expect(tables.candidates.map((c) => c.candidate_id)).toEqual(['cand-1']);
  });

  it.each(paths.slice(1).map((path) => [path.name, path] as const))('%s: the inbox and tables the dispatcher gives', async (_, path) => {
    const expected = await through(PATHS[0]!);
    const got = await through(path);
    // A rebuild runs no handler again: it keeps the marks it finds (none, here).
    const handlersAsExpected = expected.inbox.map((row) => ({ ...row, handlers: path.rebuilds === true ? false : row.handlers }));
    expect(got.inbox).toEqual(handlersAsExpected);
    expect(got.tables).toEqual(expected.tables);
  });
});
