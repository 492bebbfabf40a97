import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { replay } from '../../src/replay/index.js';
import { readTables } from '../support/tables.js';

const SCENARIOS = join(import.meta.dirname, '../../fixtures/scenarios');
const expected = JSON.parse(readFileSync(join(SCENARIOS, 'campaign-lifecycle.expected.json'), 'utf8'));

describe('the campaign lifecycle scenario', () => {
  it('in order, ends in the hand-derived expected tables', async () => {
    const db = new Database(':memory:');
    const summary = await replay(join(SCENARIOS, 'campaign-lifecycle.ndjson'), { database: db });
    expect(summary).toEqual({ received: 46, duplicates: 0, enqueued: 0, projected: 46, unknown: 0, dead: 0, erasures: 0, unreadable: [] });
    expect(readTables(db)).toEqual(expected);
  });

  it('shuffled with duplicates, ends in the same tables', async () => {
    const db = new Database(':memory:');
    const summary = await replay(join(SCENARIOS, 'campaign-lifecycle.shuffled.ndjson'), { database: db });
    expect(summary).toMatchObject({ received: 55, duplicates: 9, projected: 46, unknown: 0, dead: 0 });
    expect(readTables(db)).toEqual(expected);
  });
});
