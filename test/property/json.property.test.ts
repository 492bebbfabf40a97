// The strict parser that stands in for JSON.parse on texts with an escaped key (V8's escaped-key
// fault, nodejs/node#63785): it must read every text exactly as a correct JSON.parse does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/events/index.js';
import { hasEscapedKey, parseJson, parseStrict } from '../../src/events/json.js';
import { jsonArbitrary, spellJson, type Json } from '../support/arbitraries.js';

/** Value and key order, `__proto__` own members and -0 included; iterative, for any depth. */
function same(x: unknown, y: unknown): boolean {
  const pairs: Array<[unknown, unknown]> = [[x, y]];
  while (pairs.length > 0) {
    const [a, b] = pairs.pop()!;
    if (typeof a === 'number' && typeof b === 'number') {
      if (!Object.is(a, b)) return false;
      continue;
    }
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
      if (a !== b) return false;
      continue;
    }
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Reflect.ownKeys(a);
    const kb = Reflect.ownKeys(b);
    if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
    for (const k of ka) pairs.push([(a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k]]);
  }
  return true;
}

describe('parseStrict reads JSON as JSON.parse does', () => {
  it('for any value in any spelling (escapes, spacing, number notation, key order)', () => {
    fc.assert(
      fc.property(jsonArbitrary(), fc.integer(), (value: Json, seed) => {
        const text = spellJson(value, seed);
        // Against the value itself (spellings reorder keys: compared as canonical JSON), not
        // JSON.parse, which is what misreads such texts on Node 24.
        expect(canonicalJson(parseStrict(text))).toBe(canonicalJson(value));
        expect(canonicalJson(parseJson(text))).toBe(canonicalJson(value));
      }),
      { numRuns: 500 },
    );
  });

  it('for duplicates, __proto__, index keys, numbers at the edges, lone surrogates and any depth', () => {
    for (const text of [
      '{"a":1,"b":2,"a":3}',
      '{"__proto__":{"x":1},"constructor":2,"__proto__":null}',
      '{"b":1,"10":2,"2":3,"a":4}',
      '[-0, 1e400, -1e-400, 0.1, 123456789012345678901234567890, 1E+2]',
      '"\\ud800 \\udc00 \\u00e9 \\/ \\b\\f\\n\\r\\t"',
      ` \t\n\r{ "k" : [ true , false , null ] } \n`,
      `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
    ]) {
      expect(same(parseStrict(text), JSON.parse(text)), text.slice(0, 60)).toBe(true);
    }
  });

  it('refuses what JSON.parse refuses', () => {
    for (const text of [
      '',
      ' ',
      '{',
      '[1,]',
      '[,1]',
      '{"a"}',
      '{"a":1,}',
      '{a:1}',
      "{'a':1}",
      '01',
      '1.',
      '.5',
      '+1',
      '"\\x"',
      '"\\u12"',
      '"a\nb"',
      'tru',
      'nul',
      '[1] 2',
      '{"a":1}}',
      'NaN',
      'Infinity',
    ]) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      expect(() => parseStrict(text), text).toThrow(SyntaxError);
    }
  });
});

describe('parseJson', () => {
  it('reads an escaped key as itself after a key with a backslash was read (V8 reads it as `\\`)', () => {
    JSON.parse('{"\\\\":0}');
    parseJson('{"\\\\":0}');
    expect(Object.keys(parseJson('{"\\u0061":0}') as object)).toEqual(['a']);
    parseJson('{"h":[],"\\\\":0}');
    expect(Object.keys(parseJson('{"h":1,"\\"":2}') as object)).toEqual(['h', '"']);
  });

  it('sends only texts with an escaped key to the strict parser', () => {
    expect(hasEscapedKey('{"a":"\\n\\u00e9","b":["\\\\"]}')).toBe(false);
    expect(hasEscapedKey('{"a":1,"\\u0062" :2}')).toBe(true);
    expect(hasEscapedKey('{"a":{"x\\ty"\n:\t1}}')).toBe(true);
    expect(hasEscapedKey('["\\"a\\":", 1]')).toBe(false);
  });
});
