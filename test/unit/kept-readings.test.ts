// The intake's readings kept for the projection: taken once, only for the very bytes and identity
// the claimed row holds, and bounded by count and bytes (oldest first).
import { describe, expect, it } from 'vitest';
import { createKeptReadings } from '../../src/dispatch/kept-readings.js';

const body = (text: string) => Buffer.from(text);
const row = (inbox_id: number, raw: Uint8Array, identity: string | null = `id-${inbox_id}`) => ({ inbox_id, raw, identity });

describe('kept readings', () => {
  it('gives the reading kept for a row once, then reads nothing more for it', () => {
    const kept = createKeptReadings<string>();
    kept.keep(1, body('{"a":1}'), 'id-1', 'reading of 1');
    expect(kept.take(row(2, body('{"a":1}')))).toBeUndefined();
    expect(kept.take(row(1, body('{"a":1}')))).toBe('reading of 1');
    expect(kept.take(row(1, body('{"a":1}')))).toBeUndefined();
    expect(kept.size()).toEqual({ entries: 0, bytes: 0 });
  });

  it('gives nothing for a row whose bytes or identity are not those read (a redacted row, an id given again), and forgets it', () => {
    const kept = createKeptReadings<string>();
    kept.keep(1, body('{"name":"Jeanne"}'), 'id-1', 'reading');
    expect(kept.take(row(1, body('{"name":"J"}')))).toBeUndefined();
    kept.keep(2, body('{"name":"Jeanne"}'), 'id-2', 'reading');
    expect(kept.take(row(2, body('{"name":"Jeannf"}')))).toBeUndefined();
    kept.keep(3, body('{}'), 'id-3', 'reading');
    expect(kept.take(row(3, body('{}'), 'another identity'))).toBeUndefined();
    expect(kept.take(row(3, body('{}')))).toBeUndefined();
    expect(kept.size()).toEqual({ entries: 0, bytes: 0 });
  });

  it('keeps at most its count and its bytes, forgetting the oldest first', () => {
    const kept = createKeptReadings<number>({ maxEntries: 3, maxBytes: 10 });
    for (let id = 1; id <= 4; id++) kept.keep(id, body('ab'), `id-${id}`, id);
    expect(kept.size()).toEqual({ entries: 3, bytes: 6 });
    expect(kept.take(row(1, body('ab')))).toBeUndefined();
    kept.keep(5, body('abcdefgh'), 'id-5', 5); // 3 x 2 + 8 bytes: the oldest two go
    expect(kept.size()).toEqual({ entries: 2, bytes: 10 });
    expect([2, 3, 4].map((id) => kept.take(row(id, body('ab'))))).toEqual([undefined, undefined, 4]);
    kept.keep(6, body('more than ten bytes'), 'id-6', 6); // larger than the whole room: never kept
    expect(kept.take(row(5, body('abcdefgh')))).toBe(5);
    expect(kept.take(row(6, body('more than ten bytes')))).toBeUndefined();
  });

  it('counts a reading kept again for the same row once', () => {
    const kept = createKeptReadings<number>({ maxEntries: 2, maxBytes: 100 });
    kept.keep(1, body('abc'), 'id-1', 1);
    kept.keep(1, body('abcd'), 'id-1', 2);
    expect(kept.size()).toEqual({ entries: 1, bytes: 4 });
    expect(kept.take(row(1, body('abcd')))).toBe(2);
  });
});
