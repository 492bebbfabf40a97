// Replay takes the same path as HTTP: the hostile bodies of intake-hostile.test.ts, from files.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { replay } from '../../src/replay/index.js';
import { tempDir } from '../support/servers.js';
import { received } from '../support/bodies.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures');
const DEPTH = 100_000;

describe('replay of odd bodies', () => {
  const dirs: Array<ReturnType<typeof tempDir>> = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.cleanup();
  });

  it('keeps the same bad body, replayed twice, as one dead letter', async () => {
    const tmp = tempDir();
    dirs.push(tmp);
    const db = new Database(':memory:');
    const notJson = join(FIXTURES, 'invalid/not-json.txt');
    const notEnvelope = join(tmp.dir, 'not-an-envelope.json');
    writeFileSync(notEnvelope, '{"event": "candidate.added", "data": "no timestamp"}');
    const summary = await replay([notJson, notEnvelope, notJson, notEnvelope], { database: db });
    expect(summary).toEqual({ received: 4, duplicates: 2, enqueued: 0, projected: 0, unknown: 0, dead: 2, erasures: 0, unreadable: [] });
    expect(db.prepare('SELECT COUNT(*) FROM inbox').pluck().get()).toBe(2);
    db.close();
  });

  it('stores each element of a .json array as its own bytes: deep ones, 1e400 and __proto__ kept as sent', async () => {
    const tmp = tempDir();
    dirs.push(tmp);
    const event = (candidate: string, extra: string) =>
      `{ "event": "candidate.added", "timestamp": "2026-11-20T10:00:00Z",\n  "data": { "campaign_id": "cmp_r", "candidate_id": "${candidate}"${extra} } }`;
    const elements = [
      event('deep', `, "deep": ${'['.repeat(DEPTH)}"a,]}\\"["${']'.repeat(DEPTH)}`),
      event('infinite', ', "x": 1e400'),
      event('proto', ', "__proto__": { "x": 1 }'),
      event('proto', ', "__proto__": { "x": 2 }'),
      '"not an envelope"',
    ];
    const file = join(tmp.dir, 'events.json');
    writeFileSync(file, `[\n  ${elements.join(' ,\n  ')}\n]\n`);
    const db = new Database(':memory:');
    const summary = await replay(file, { database: db });
    // JSON.stringify would have thrown on the deep element and written 1e400 as null.
    expect(summary).toEqual({ received: 5, duplicates: 0, enqueued: 0, projected: 3, unknown: 0, dead: 2, erasures: 0, unreadable: [] });
    const raws = (db.prepare('SELECT raw, codec FROM inbox ORDER BY inbox_id').all() as Array<{ raw: Buffer; codec: number | null }>).map(
      (row) => received(row).toString('utf8'),
    );
    expect(raws).toEqual(elements);
    const infinite = db.prepare('SELECT identity, raw_sha256, reasons FROM inbox WHERE inbox_id = 2').get() as Record<string, string>;
    expect(infinite).toMatchObject({ identity: null, raw_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.parse(infinite.reasons!)[0].path).toBe('data.x');
    db.close();
  });

  it('writes a deep object given in memory instead of giving up on it', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < DEPTH; i++) deep = { a: deep };
    const db = new Database(':memory:');
    const summary = await replay(
      [{ event: 'candidate.added', timestamp: '2026-11-20T10:00:00Z', data: { campaign_id: 'cmp_m', candidate_id: 'deep', deep } }],
      { database: db },
    );
    expect(summary).toMatchObject({ received: 1, projected: 1, unreadable: [] });
    db.close();
  });
});
