import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/receiver/create-receiver.js';
import { replay, ReplayInputError } from '../../src/replay/index.js';
import { FIXTURES_DIR, sampleEvent } from '../../src/testing/index.js';
import { received } from '../support/bodies.js';

describe('replay of an input that cannot be read', () => {
  it('rejects, naming it, after replaying the readable inputs (replay())', async () => {
    const error = await replay([`${FIXTURES_DIR}scenarios/nope.ndjson`, sampleEvent('credits.low')], { database: ':memory:' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ReplayInputError);
    expect((error as ReplayInputError).message).toMatch(/nope\.ndjson \(ENOENT/);
    expect((error as ReplayInputError).summary).toMatchObject({ received: 1, projected: 1 });
  });

  it('rejects the same way from receiver.replay(), and the readable events are projected', async () => {
    const receiver = createReceiver({ database: ':memory:', secret: 's' });
    await expect(receiver.replay(['fixtures/scenarios/missing.ndjson', sampleEvent('credits.low')])).rejects.toThrow(ReplayInputError);
    expect(await receiver.query.getCredits()).toMatchObject({ credits_remaining: 8.5, low_threshold: 10 }); // sampleEvent('credits.low')'s
    await receiver.close();
  });
});

describe('replay of NDJSON lines, as bytes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prequal-ndjson-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const bulk of [true, false]) {
    it(`keeps each line's exact bytes, splits at LF (CRLF too), skips blank lines, and joins a line read in many chunks (${bulk ? 'bulk' : 'batched'})`, async () => {
      const crlf = Buffer.from(`${JSON.stringify(sampleEvent('credits.low'))}\r\n`);
      // Not UTF-8: a decoder would store U+FFFD in its place, and the dead letter would not be what was sent.
      const notUtf8 = Buffer.concat([
        Buffer.from('{"event":"candidate.added","note":"'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]);
      // Valid JSON far longer than a read chunk (64 KiB), so that it spans several.
      const created = JSON.stringify(sampleEvent('campaign.created'));
      const long = Buffer.from(`{${' '.repeat(200_000)}${created.slice(1)}`);
      const last = Buffer.from(JSON.stringify(sampleEvent('credits.depleted')));
      const file = join(dir, 'events.ndjson');
      writeFileSync(file, Buffer.concat([crlf, Buffer.from('\n  \t \r\n'), notUtf8, Buffer.from('\n'), long, Buffer.from('\r\n'), last]));
      const database = join(dir, 'replayed.db');

      const summary = await replay(file, { database, bulk });

      expect(summary).toMatchObject({ received: 4, projected: 3, dead: 1, duplicates: 0 });
      const db = new Database(database, { readonly: true });
      const raws = (db.prepare('SELECT raw, codec FROM inbox ORDER BY inbox_id').all() as Array<{ raw: Buffer; codec: number | null }>).map(
        received,
      );
      db.close();
      expect(raws).toHaveLength(4);
      expect(raws[0]!.equals(crlf.subarray(0, crlf.length - 2))).toBe(true);
      expect(raws[1]!.equals(notUtf8)).toBe(true);
      expect(raws[2]!.equals(long)).toBe(true);
      expect(raws[3]!.equals(last)).toBe(true);
    });
  }
});
