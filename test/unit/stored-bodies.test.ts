// Bodies as the inbox stores them (src/store/bodies.ts): every body comes back byte for byte,
// whatever it holds, and the shipped dictionary holds nobody's values.
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BODY_DICTIONARIES } from '../../src/store/body-dictionary.js';
import { bodyOf, storedBody } from '../../src/store/bodies.js';
import { compactedRow } from '../../src/store/compacted-row.js';
import { sampleEvent } from '../../src/testing/index.js';

const FIXTURES = new URL('../../fixtures/events/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));

describe('stored bodies', () => {
  it('come back as the exact bytes received, whatever they are (not UTF-8, empty, binary, JSON)', () => {
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }),
      fc.string({ maxLength: 500 }).map((s) => Buffer.from(s, 'utf8')),
      fc.json().map((s) => Buffer.from(s)),
      fc.constantFrom(...readdirSync(FIXTURES).map(fixture)),
    );
    fc.assert(
      fc.property(bodies, (raw) => {
        const stored = storedBody(raw);
        expect(Buffer.compare(bodyOf(stored.codec, stored.bytes), Buffer.from(raw))).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('are deflated when that makes them smaller, and kept as received otherwise', () => {
    const event = fixture('candidate.interview.completed.json');
    const compact = storedBody(event);
    expect(compact.codec).toBe(1);
    expect(compact.bytes.byteLength).toBeLessThan(event.byteLength * 0.6);
    const tiny = storedBody(Buffer.from([0xff, 0x00]));
    expect(tiny).toEqual({ codec: 0, bytes: Buffer.from([0xff, 0x00]) });
  });

  it("hold no more memory than Node's shared buffer pool, written or read (not zlib's 16 KB chunk each)", () => {
    const body = Buffer.from(JSON.stringify(sampleEvent('candidate.added')));
    const stored = storedBody(body);
    expect(stored.codec).toBe(1);
    // A slice of a larger allocation keeps the whole of it alive: at most a pool slab (8 KB, shared).
    expect(stored.bytes.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
    const read = bodyOf(stored.codec, stored.bytes);
    expect(read.equals(body)).toBe(true);
    expect(read.buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize);
  });

  it('stored before there were codecs (null) are read as received; an unknown codec says to upgrade', () => {
    const plain = Buffer.from('{"event":"credits.low"}');
    expect(bodyOf(null, plain)).toEqual(plain);
    expect(bodyOf(0, plain)).toEqual(plain);
    expect(() => bodyOf(9, plain)).toThrow(/codec 9, which this version does not know: upgrade prequal-hooks/);
  });

  it('rewritten from the old form name the campaign of an accepted body only', () => {
    const event = fixture('candidate.added.json');
    const campaign = (JSON.parse(event.toString('utf8')) as { data: { campaign_id: string } }).data.campaign_id;
    expect(compactedRow(event, 'accepted').campaignId).toBe(campaign);
    expect(compactedRow(event, 'invalid_envelope').campaignId).toBeNull();
    expect(compactedRow(Buffer.from('not json'), 'accepted').campaignId).toBeNull();
  });

  it('are deflated with a dictionary that holds no value of the fixtures that could name someone', () => {
    const dictionary = BODY_DICTIONARIES[1]!.toString('utf8');
    const kept = new Set(['status', 'old_status', 'new_status', 'contract_type', 'failure_reason']);
    const values: string[] = [];
    for (const file of readdirSync(FIXTURES)) {
      const { data, timestamp } = JSON.parse(fixture(file).toString('utf8')) as { data: Record<string, unknown>; timestamp: string };
      values.push(timestamp);
      const walk = (key: string, value: unknown): void => {
        if (typeof value === 'string' && !kept.has(key) && value.length > 3) values.push(value);
        else if (Array.isArray(value)) value.forEach((v) => walk(key, v));
        else if (typeof value === 'object' && value !== null) Object.entries(value).forEach(([k, v]) => walk(k, v));
      };
      walk('data', data);
    }
    expect(values.length).toBeGreaterThan(40);
    expect(values.filter((value) => dictionary.includes(value))).toEqual([]);
  });
});
