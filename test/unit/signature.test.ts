import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../src/signature.js';

// Golden vectors computed once with an independent tool:
//   printf '%s' "$body" | openssl dgst -sha256 -hmac 'whsec_9f8e7d6c5b4a' -hex
const SECRET = 'whsec_9f8e7d6c5b4a';
const LARGE = 'Préparateur de commandes — équipe de nuit 🚚, 35 000 € brut annuel\n'.repeat(80);
const VECTORS = [
  {
    name: 'ASCII body',
    body: '{"event":"credits.low","timestamp":"2026-11-20T10:00:00Z","data":{"credits_remaining":9.5,"threshold":10}}',
    hex: '6cf464884b3c07e2bca5f958ab5a35aa5c533ea0e16b9d36c04f34857225c028',
  },
  {
    name: 'French accents and an emoji',
    body: '{"event":"candidate.added","timestamp":"2026-11-20T10:00:00+01:00","data":{"first_name":"Éloïse","last_name":"Gaëtan-Brûlé","note":"🚀 très motivée"}}',
    hex: 'c2082798b15c96f499033bff17fb03e7438fc19c77df640138965814ec9fcd1d',
  },
  { name: 'empty body', body: '', hex: 'e2fe24cb50e3e609ebbce798c18927981fb232e38258be602b1e89ed54672794' },
  { name: 'multi-KB body', body: LARGE, hex: '189f27f6c5c5d54f58817ae7f61c6125095da677afe557de4e16df4d2e4e5291' },
];

describe('sign', () => {
  it('keeps the multi-KB vector body as it was when its signature was computed', () => {
    const bytes = Buffer.from(LARGE, 'utf8');
    expect(bytes.length).toBe(6000);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe('98eb420f219363aa39c30ff46eaa0732f5422da82543e9ada7bd2aab5ccae1fa');
  });

  for (const vector of VECTORS) {
    it(`matches openssl for the ${vector.name}`, () => {
      expect(sign(SECRET, Buffer.from(vector.body, 'utf8'))).toBe(`sha256=${vector.hex}`);
      expect(sign(SECRET, vector.body)).toBe(`sha256=${vector.hex}`);
      expect(verify([SECRET], Buffer.from(vector.body, 'utf8'), `sha256=${vector.hex}`)).toEqual({
        ok: true,
        secretIndex: 0,
      });
    });
  }
});

describe('verify', () => {
  const body = Buffer.from(VECTORS[1]!.body, 'utf8');
  const good = sign(SECRET, body);

  it('says which of several secrets matched, for rotation', () => {
    expect(verify(['old-secret', SECRET], body, good)).toEqual({ ok: true, secretIndex: 1 });
    expect(verify([SECRET, 'new-secret'], body, good)).toEqual({ ok: true, secretIndex: 0 });
  });

  it('checks the raw bytes, not a decoded and re-encoded string', () => {
    // The same text in Latin-1 bytes is another body: its signature must not match.
    const latin1 = Buffer.from(VECTORS[1]!.body, 'latin1');
    expect(verify([SECRET], latin1, good)).toEqual({ ok: false, reason: 'MISMATCH' });
    const spaced = Buffer.from(VECTORS[1]!.body.replace('{"event"', '{ "event"'), 'utf8');
    expect(verify([SECRET], spaced, good)).toEqual({ ok: false, reason: 'MISMATCH' });
  });

  it('accepts upper-case hex but rejects every malformed header cleanly', () => {
    expect(verify([SECRET], body, `sha256=${good.slice(7).toUpperCase()}`).ok).toBe(true);
    const cases: Array<[unknown, string]> = [
      [undefined, 'MISSING'],
      [null, 'MISSING'],
      ['', 'MISSING'],
      [[], 'MISSING'],
      [good.slice(7), 'MALFORMED'], // no prefix
      [`sha1=${good.slice(7)}`, 'MALFORMED'],
      [`SHA256=${good.slice(7)}`, 'MALFORMED'],
      [good.slice(0, -2), 'MALFORMED'], // too short
      [`${good}00`, 'MALFORMED'], // too long
      [`${good.slice(0, -1)}g`, 'MALFORMED'], // non-hex
      [` ${good}`, 'MALFORMED'],
      [`${good}, ${good}`, 'REPEATED'], // repeated, as node and fetch join it
      [[good, good], 'REPEATED'], // repeated, as raw headers give it
      [`sha256=${'0'.repeat(64)}`, 'MISMATCH'],
    ];
    for (const [header, reason] of cases) {
      expect(verify([SECRET], body, header as string), String(header)).toEqual({ ok: false, reason });
    }
    expect(verify([SECRET], body, [good])).toEqual({ ok: true, secretIndex: 0 });
  });

  it('takes one secret as a plain string (or bytes), or several as an array', () => {
    expect(verify(SECRET, body, good)).toEqual({ ok: true, secretIndex: 0 });
    expect(verify(Buffer.from(SECRET), body, good)).toEqual({ ok: true, secretIndex: 0 });
    expect(verify(['old', SECRET], body, good)).toEqual({ ok: true, secretIndex: 1 });
    expect(verify('another', body, good)).toEqual({ ok: false, reason: 'MISMATCH' });
  });

  it('rejects everything when no secret matches or none is given', () => {
    expect(verify(['another'], body, good)).toEqual({ ok: false, reason: 'MISMATCH' });
    expect(verify([], body, good)).toEqual({ ok: false, reason: 'MISMATCH' });
  });
});
