import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, parseJson, readEnvelope } from '../../src/events/index.js';
import { deliveryOf } from '../../src/receive/delivery.js';
import { DEFAULT_ACCOUNT } from '../../src/receive/account.js';
import { jsonArbitrary, sameJson, spellJson, type Json } from '../support/arbitraries.js';

// docs/projection.md section 1, written independently of src/: recursive, keys compared as arrays of
// code points, strings and numbers as JSON.stringify writes them.
function referenceCanonical(value: Json): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`;
  const byCodePoint = (a: string, b: string) => {
    const x = [...a].map((c) => c.codePointAt(0)!);
    const y = [...b].map((c) => c.codePointAt(0)!);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return x.length - y.length;
  };
  return `{${Object.keys(value)
    .sort(byCodePoint)
    .map((key) => `${JSON.stringify(key)}:${referenceCanonical(value[key]!)}`)
    .join(',')}}`;
}

const TIMESTAMP = '2026-11-20T10:00:00Z';

/** An envelope around a value; sometimes with a member the contract does not name (it counts too). */
const envelopeArbitrary = (value: fc.Arbitrary<Json>) =>
  fc.tuple(value, fc.option(value, { nil: undefined })).map(([data, extra]): Json => ({
    event: 'credits.low',
    timestamp: TIMESTAMP,
    data: { v: data },
    ...(extra !== undefined && { meta: extra }),
  }));

const identityOf = (text: string) => {
  const reading = readEnvelope(Buffer.from(text, 'utf8'));
  if (!reading.ok) throw new Error(`not an event: ${JSON.stringify(reading.issues)}`);
  return reading.identity;
};

describe('identity of JSON values (docs/projection.md section 1)', () => {
  it('is shared by one value spelled with other key order, spacing, escapes and number notation', () => {
    fc.assert(
      fc.property(envelopeArbitrary(jsonArbitrary()), fc.integer(), fc.integer(), (envelope, seedA, seedB) => {
        const a = spellJson(envelope, seedA);
        const b = spellJson(envelope, seedB);
        expect(identityOf(a)).toBe(identityOf(b));
        // Fast path and iterative slow path alike write the contract's canonical JSON.
        // parseJson, not JSON.parse: on Node 24, V8 can misread escaped keys (nodejs/node#63785).
        expect(canonicalJson(parseJson(a))).toBe(referenceCanonical(envelope));
        expect(identityOf(a)).toBe(createHash('sha256').update(referenceCanonical(envelope), 'utf8').digest('hex'));
      }),
      { numRuns: 1000 },
    );
  });

  it('differs for values that differ, however little (own __proto__ and constructor keys included)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(envelopeArbitrary(jsonArbitrary({ small: true, depth: 3 })), fc.integer()), { minLength: 2, maxLength: 12 }),
        (deliveries) => {
          const identities = deliveries.map(([envelope, seed]) => identityOf(spellJson(envelope, seed)));
          for (let i = 0; i < deliveries.length; i++) {
            for (let j = i + 1; j < deliveries.length; j++) {
              const same = sameJson(deliveries[i]![0], deliveries[j]![0]);
              expect(identities[i] === identities[j], `${spellJson(deliveries[i]![0], 0)} vs ${spellJson(deliveries[j]![0], 0)}`).toBe(
                same,
              );
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  // What canonical JSON cannot write faithfully: each would read as (or collide with) another value.
  const POISONS: Array<[string, Buffer, string]> = [
    ['a number beyond the double range', Buffer.from('1e400'), 'double range'],
    ['a negative one', Buffer.from('-1E999'), 'double range'],
    ['a lone high surrogate', Buffer.from('"a\\ud800"'), 'lone surrogate'],
    ['a lone low surrogate', Buffer.from('"\\udfffb"'), 'lone surrogate'],
    ['a lone surrogate in a key', Buffer.from('{"\\udbff":1}'), 'lone surrogate'],
    ['byte 0xFF', Buffer.from([0x22, 0xff, 0x22]), 'not UTF-8'],
    ['byte 0xFE', Buffer.from([0x22, 0xfe, 0x22]), 'not UTF-8'],
    ['an overlong encoding', Buffer.from([0x22, 0xc0, 0xaf, 0x22]), 'not UTF-8'],
    ['an encoded surrogate', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), 'not UTF-8'],
    ['a code point past U+10FFFF', Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]), 'not UTF-8'],
    ['a truncated sequence', Buffer.from([0x22, 0xe2, 0x82, 0x22]), 'not UTF-8'],
  ];

  it('is refused to a body canonical JSON cannot represent: a dead letter under the SHA-256 of its bytes', () => {
    fc.assert(
      fc.property(jsonArbitrary(), fc.integer(), fc.nat(3), fc.constantFrom(...POISONS), (value, seed, depth, [, poison, reason]) => {
        const body = Buffer.concat([
          Buffer.from(`{"event":"credits.low","timestamp":"${TIMESTAMP}","data":{"v":${spellJson(value, seed)},"p":${'['.repeat(depth)}`),
          poison,
          Buffer.from(`${']'.repeat(depth)}}}`),
        ]);
        const reading = readEnvelope(body);
        expect(reading).toMatchObject({ ok: false, reason: 'INVALID_JSON' });
        if (reading.ok) return;
        expect(reading.issues[0]!.message).toContain(reason);
        if (reason !== 'not UTF-8') expect(reading.issues[0]!.path).toMatch(/^data\.p/);
        const delivery = deliveryOf(DEFAULT_ACCOUNT, body, reading, TIMESTAMP, null);
        expect(delivery).toMatchObject({ identity: null, verdict: 'invalid_json' });
        expect(delivery.rawSha256).toBe(createHash('sha256').update(body).digest('hex'));
      }),
      { numRuns: 500 },
    );
  });

  it('never merges two bodies that differ only in their unrepresentable part', () => {
    // The bugs this guards: 0xFF and 0xFE both decoded to U+FFFD; 1e400 and null both wrote "null".
    const body = (middle: Buffer) =>
      Buffer.concat([Buffer.from('{"event":"credits.low","timestamp":"2026-11-20T10:00:00Z","data":{"v":'), middle, Buffer.from('}}')]);
    const keys = POISONS.map(([, poison]) => {
      const raw = body(poison);
      const delivery = deliveryOf(DEFAULT_ACCOUNT, raw, readEnvelope(raw), TIMESTAMP, null);
      return delivery.identity ?? `raw:${delivery.rawSha256}`;
    });
    const valid = [body(Buffer.from('null')), body(Buffer.from('"\uFFFD"'))].map((raw) => readEnvelope(raw));
    expect(valid.every((r) => r.ok)).toBe(true);
    expect(new Set([...keys, ...valid.map((r) => (r.ok ? r.identity : ''))]).size).toBe(POISONS.length + 2);
  });
});
