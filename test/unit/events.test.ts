import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EVENT_KINDS,
  KIND_RANKS,
  canonicalJson,
  eventIdentity,
  normaliseTimestamp,
  orderKey,
  parseEvent,
  parseInstant,
  readEnvelope,
  UnrepresentableJsonError,
  type Envelope,
} from '../../src/events/index.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/events');
const fixture = (kind: string): Envelope => JSON.parse(readFileSync(join(FIXTURES, `${kind}.json`), 'utf8'));

describe('fixtures', () => {
  it('hold one event of each of the ten kinds', () => {
    const files = readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(files).toEqual([...EVENT_KINDS].map((k) => `${k}.json`).sort());
  });

  for (const kind of EVENT_KINDS) {
    it(`${kind} parses against its schema`, () => {
      const reading = parseEvent(fixture(kind));
      expect(reading.ok ? reading.event.event : reading.issues).toBe(kind);
    });
  }
});

// Fields without which an event of the kind means nothing; each must be rejected with its path.
const REQUIRED: Record<string, Array<[string, unknown]>> = {
  'campaign.created': [
    ['campaign_id', 42],
    ['status', 'running'],
  ],
  'campaign.status_changed': [
    ['campaign_id', null],
    ['new_status', 'archived'],
  ],
  'candidate.added': [
    ['candidate_id', 7],
    ['campaign_id', ''],
  ],
  'candidate.sourced': [
    ['candidate_id', null],
    ['campaign_id', 12],
  ],
  'candidate.interview.started': [
    ['candidate_id', []],
    ['campaign_id', {}],
  ],
  'candidate.interview.failed': [
    ['failure_reason', 'busy'],
    ['candidate_id', 3],
  ],
  'candidate.interview.completed': [
    ['interview_score', 'huit'],
    ['interview_score', 11],
    ['candidate_id', false],
  ],
  'candidate.interview.completed.extended': [
    ['responses', 'none'],
    ['interview_score', -1],
  ],
  'credits.low': [
    ['credits_remaining', '9'],
    ['threshold', null],
  ],
  'credits.depleted': [['credits_remaining', 'zero']],
};

describe('schemas', () => {
  for (const [kind, fields] of Object.entries(REQUIRED)) {
    for (const [field, wrong] of fields) {
      it(`${kind}: data.${field} missing or ${JSON.stringify(wrong)} is rejected with its path`, () => {
        const missing = fixture(kind);
        delete missing.data[field];
        const mistyped = fixture(kind);
        mistyped.data[field] = wrong;
        for (const envelope of [missing, mistyped]) {
          const reading = parseEvent(envelope);
          expect(reading.ok).toBe(false);
          if (!reading.ok) {
            expect(reading.reason).toBe('INVALID_DATA');
            expect(reading.issues.map((i) => i.path)).toContain(`data.${field}`);
          }
        }
      });
    }
  }

  it('rejects optional fields of the wrong type, with their path', () => {
    const cases: Array<[string, string, unknown]> = [
      ['candidate.sourced', 'sms_sent', 'yes'],
      ['candidate.added', 'call_queued', 'oui'],
      ['candidate.added', 'email', 42],
      ['campaign.created', 'questions_count', 6.5],
      ['candidate.interview.completed.extended', 'responses', [{ question: 'Q', score: 'bien' }]],
    ];
    for (const [kind, field, wrong] of cases) {
      const event = fixture(kind);
      event.data[field] = wrong;
      const reading = parseEvent(event);
      expect(reading.ok, `${kind} ${field}`).toBe(false);
      if (!reading.ok) expect(reading.issues.map((i) => i.path).join(' ')).toContain(`data.${field}`);
    }
  });

  it('accepts null or absent descriptive text and keeps fields the service adds later', () => {
    const event = fixture('candidate.interview.completed');
    const data = event.data;
    data.strengths = null;
    delete data.concerns;
    data.recording_url = 'https://example.test/r/1';
    const reading = parseEvent(event);
    expect(reading.ok).toBe(true);
    if (reading.ok) {
      const parsed = reading.event.data as Record<string, unknown>;
      expect(parsed.strengths).toBeNull();
      expect('concerns' in parsed).toBe(false);
      expect(parsed.recording_url).toBe('https://example.test/r/1');
    }
  });

  it('rejects a timestamp that is not ISO 8601 with a zone', () => {
    for (const timestamp of ['20/11/2026 10:00', '2026-11-20T10:00:00', '2026-11-20', '2026-02-30T10:00:00Z', 'soon']) {
      const event = { ...fixture('credits.low'), timestamp };
      const reading = parseEvent(event);
      expect(reading.ok, timestamp).toBe(false);
      if (!reading.ok) expect(reading.issues.map((i) => i.path)).toContain('timestamp');
    }
  });

  it('tells an unknown kind apart from invalid data', () => {
    const reading = parseEvent({ event: 'candidate.interview.rescheduled', timestamp: '2026-11-20T10:00:00Z', data: {} });
    expect(reading).toMatchObject({ ok: false, reason: 'UNKNOWN_KIND', kind: 'candidate.interview.rescheduled' });
  });
});

describe('envelope', () => {
  it('is a JSON object with a string event, a string timestamp and an object data', () => {
    expect(readEnvelope('{"event":"x","timestamp":"t","data":{}}').ok).toBe(true);
    expect(readEnvelope('{"event":')).toMatchObject({ ok: false, reason: 'INVALID_JSON' });
    for (const body of [
      '[]',
      '"event"',
      'null',
      '{"event":1,"timestamp":"t","data":{}}',
      '{"event":"x","data":{}}',
      '{"event":"x","timestamp":"t","data":[]}',
    ]) {
      expect(readEnvelope(body), body).toMatchObject({ ok: false, reason: 'INVALID_ENVELOPE' });
    }
  });
});

describe('identity', () => {
  const compact = '{"event":"credits.low","timestamp":"2026-11-20T10:00:00Z","data":{"credits_remaining":9,"threshold":10}}';
  const reordered =
    '{ "data" : { "threshold": 10, "credits_remaining": 9 },\n  "timestamp": "2026-11-20T10:00:00Z", "event": "credits.low" }';

  it('is the same for the same envelope with other key order and spacing', () => {
    const a = readEnvelope(compact);
    const b = readEnvelope(reordered);
    expect(a.ok && b.ok).toBe(true);
    if (a.ok && b.ok) {
      expect(a.identity).toMatch(/^[0-9a-f]{64}$/);
      expect(a.identity).toBe(b.identity);
    }
  });

  it('is the SHA-256 of the canonical JSON of {event, timestamp, data}', () => {
    expect(canonicalJson(JSON.parse(reordered))).toBe(
      '{"data":{"credits_remaining":9,"threshold":10},"event":"credits.low","timestamp":"2026-11-20T10:00:00Z"}',
    );
    // sha256 of the canonical text above, computed with sha256sum.
    expect(eventIdentity(JSON.parse(compact))).toBe('c76fe7603731490bb7ce41284b8d30842313064058fd6faab618c9cf280789da');
  });

  it('differs when any value differs, including the timestamp text', () => {
    const base = JSON.parse(compact);
    const ids = new Set([
      eventIdentity(base),
      eventIdentity({ ...base, timestamp: '2026-11-20T11:00:00+01:00' }),
      eventIdentity({ ...base, data: { ...base.data, threshold: 11 } }),
      eventIdentity({ ...base, event: 'credits.depleted' }),
    ]);
    expect(ids.size).toBe(4);
  });

  it('sorts array-index keys as text too, where JSON.stringify would put them first in numeric order', () => {
    expect(canonicalJson({ b: 1, '9': 2, '10': 3, a: { '2': [{ y: 1, '0': null }], z: true } })).toBe(
      '{"10":3,"9":2,"a":{"2":[{"0":null,"y":1}],"z":true},"b":1}',
    );
  });

  it('sorts keys by code point, not by UTF-16 unit', () => {
    // U+FF21 (fullwidth A) is one unit above the surrogates; U+1F600 is two surrogate units.
    expect(canonicalJson({ '\u{1F600}': 1, '\uFF21': 2, b: 3, a: [{ z: 1, y: null }] })).toBe(
      '{"a":[{"y":null,"z":1}],"b":3,"\uFF21":2,"\u{1F600}":1}',
    );
  });
});

describe('identity keeps every own key and takes any depth', () => {
  const envelope = (data: string, extra = '') =>
    `{"event":"credits.low","timestamp":"2026-11-20T10:00:00Z"${extra},"data":{"credits_remaining":9,"threshold":10${data}}}`;
  const identity = (body: string) => {
    const reading = readEnvelope(Buffer.from(body));
    if (!reading.ok) throw new Error(JSON.stringify(reading.issues));
    return reading.identity;
  };

  it('counts own __proto__ and constructor keys: bodies that differ inside them are two events', () => {
    const ids = [
      envelope(''),
      envelope(',"__proto__":{"x":1}'),
      envelope(',"__proto__":{"x":2}'),
      envelope(',"__proto__":null'),
      envelope(',"constructor":{"x":1}'),
      envelope(',"constructor":{"x":1},"__proto__":{"x":1}'),
    ].map(identity);
    expect(new Set(ids).size).toBe(ids.length);
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"z":1,"y":2},"a":[{"__proto__":0}]}'))).toBe(
      '{"__proto__":{"y":2,"z":1},"a":[{"__proto__":0}],"b":1}',
    );
    // The same key, other order and spacing: one event.
    expect(identity(envelope(',"__proto__":{"x":1,"y":2}'))).toBe(identity(envelope(', "__proto__" : { "y":2, "x":1 }')));
  });

  it('hands __proto__ and constructor keys of data to handlers, at any level', () => {
    const body = JSON.parse(
      envelope(',"__proto__":{"x":1},"constructor":"c"')
        .replace('credits.low', 'candidate.interview.completed.extended')
        .replace(
          '"credits_remaining":9,"threshold":10',
          '"campaign_id":"c","candidate_id":"k","interview_score":8,"responses":[{"question":"Q","__proto__":{"y":2}}]',
        ),
    );
    const reading = parseEvent(body);
    expect(reading.ok).toBe(true);
    if (!reading.ok) return;
    const data = reading.event.data as Record<string, unknown> & { responses: Array<Record<string, unknown>> };
    expect(Object.keys(data)).toContain('__proto__');
    expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toEqual({ x: 1 });
    expect(data.constructor).toBe('c');
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype); // a key, not a prototype
    expect(Object.getOwnPropertyDescriptor(data.responses[0], '__proto__')?.value).toEqual({ y: 2 });
  });

  it('counts envelope members beyond {event, timestamp, data}', () => {
    expect(identity(envelope('', ',"attempt":1'))).not.toBe(identity(envelope('', ',"attempt":2')));
    expect(identity(envelope('', ',"attempt":1'))).not.toBe(identity(envelope('')));
  });

  it('takes any depth JSON.parse accepts: 100,000 nested arrays or objects', () => {
    const n = 100_000;
    const arrays = `${'['.repeat(n)}${']'.repeat(n)}`;
    const objects = `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    for (const deep of [arrays, objects]) {
      const compact = envelope(`,"deep":${deep}`);
      expect(canonicalJson(JSON.parse(compact))).toBe(
        `{"data":{"credits_remaining":9,"deep":${deep},"threshold":10},"event":"credits.low","timestamp":"2026-11-20T10:00:00Z"}`,
      );
      expect(identity(compact)).toBe(identity(envelope(`,"deep" : ${deep.replaceAll(':', ' : ')}`)));
      const reading = parseEvent(JSON.parse(compact));
      expect(reading.ok).toBe(true);
    }
    expect(identity(envelope(`,"deep":${arrays}`))).not.toBe(identity(envelope(`,"deep":${'['.repeat(n - 1)}${']'.repeat(n - 1)}`)));
  });

  it('refuses what canonical JSON cannot write faithfully, saying where', () => {
    expect(readEnvelope(envelope(',"x":[1e400]'))).toMatchObject({
      ok: false,
      reason: 'INVALID_JSON',
      issues: [{ path: 'data.x[0]', message: expect.stringContaining('double range') }],
    });
    expect(readEnvelope(envelope(',"x":"\\\\ud800 is text, \\ud800 is a lone surrogate"'))).toMatchObject({
      ok: false,
      issues: [{ path: 'data.x', message: expect.stringContaining('lone surrogate (U+D800)') }],
    });
    expect(
      readEnvelope(Buffer.from([...Buffer.from('{"event":"x","timestamp":"t","data":{"x":"'), 0xff, ...Buffer.from('"}}')])),
    ).toMatchObject({
      ok: false,
      reason: 'INVALID_JSON',
      issues: [{ path: '', message: 'the body is not UTF-8: byte 0xFF at offset 42 starts no valid UTF-8 sequence' }],
    });
    const deep = readEnvelope(envelope(`,"x":${'['.repeat(50_000)}-1e400${']'.repeat(50_000)}`));
    expect(deep.ok || deep.issues[0]!.path).toBe('data.x[0][0][0][0][0][0]…(49986 more levels)…[0][0][0][0][0][0][0][0]');
    expect(() => canonicalJson({ x: Infinity })).toThrow(UnrepresentableJsonError);
    expect(() => eventIdentity({ event: 'x', timestamp: 't', data: { x: '\udc00' } })).toThrow(
      /data\.x: the string holds a lone surrogate/,
    );
    const cycle: Record<string, unknown> = {};
    cycle.self = [cycle];
    expect(() => canonicalJson(cycle)).toThrow(/self\[0\]: the value contains itself/);
  });
});

describe('timestamps', () => {
  it('normalise two offsets of one instant to the same UTC millisecond text', () => {
    expect(normaliseTimestamp('2026-11-20T10:00:00Z')).toBe('2026-11-20T10:00:00.000Z');
    expect(normaliseTimestamp('2026-11-20T11:00:00+01:00')).toBe('2026-11-20T10:00:00.000Z');
    expect(normaliseTimestamp('2026-11-20T05:30:00-04:30')).toBe('2026-11-20T10:00:00.000Z');
    expect(normaliseTimestamp('2026-11-20T10:00:00-00:00')).toBe('2026-11-20T10:00:00.000Z');
    expect(parseInstant('2026-11-20T10:00:00.123999Z')).toBe(parseInstant('2026-11-20T10:00:00.123Z'));
    expect(normaliseTimestamp('2028-02-29T23:59:59.5Z')).toBe('2028-02-29T23:59:59.500Z');
    // Any number of fraction digits, truncated to the millisecond, never rounded.
    expect(normaliseTimestamp('2026-11-20T10:00:00.9996Z')).toBe('2026-11-20T10:00:00.999Z');
    expect(normaliseTimestamp('2026-11-20T10:00:00.123456789012+01:00')).toBe('2026-11-20T09:00:00.123Z');
  });

  it("accept only the contract's spelling: extended format, seconds, `Z` or `±hh:mm`", () => {
    // docs/projection.md section 2: other spellings make the event a dead letter.
    for (const text of [
      '2026-11-20T05:30:00-0430', // basic-format zone
      '2026-11-20T12:00:00+02', // hour-only zone
      '2026-11-20T12:00+02:00', // no seconds
      '2026-11-20T10:00Z', // no seconds
      '2026-11-20T10:00:00,5Z', // comma decimal
      '2026-11-20T10:00:00.Z', // a point without digits
      '2026-11-20T10:00:00', // no zone
      '20261120T100000Z', // basic format
      '2026-11-20T100000Z', // basic time
      '2026-11-20 10:00:00Z', // space for T
      '2026-11-20t10:00:00z', // lower case
      '2026-11-20T10:00:00+01:00:00', // seconds in the zone
      '+2026-11-20T10:00:00Z', // expanded year
      '2026-11-20T10:00:00Z ', // trailing space
      '２０２６-11-20T10:00:00Z', // non-ASCII digits
    ]) {
      expect(parseInstant(text), text).toBeNull();
      const reading = parseEvent({ ...fixture('credits.low'), timestamp: text });
      expect(reading.ok, text).toBe(false);
      if (!reading.ok)
        expect(
          reading.issues.map((i) => i.path),
          text,
        ).toContain('timestamp');
    }
  });

  it('refuse days and times that do not exist', () => {
    for (const text of [
      '2026-02-29T10:00:00Z',
      '2026-11-31T10:00:00Z',
      '2026-11-20T24:00:00Z',
      '2026-11-20T10:60:00Z',
      '2026-13-01T10:00:00Z',
      '2026-11-20T10:00:00+25:00',
    ]) {
      expect(parseInstant(text), text).toBeNull();
    }
  });

  it('order by instant, then kind rank, then identity', () => {
    const early = orderKey(parseInstant('2026-11-20T11:00:00+01:00')!, 'credits.depleted', 'f'.repeat(64));
    const late = orderKey(parseInstant('2026-11-20T10:00:00.001Z')!, 'campaign.created', '0'.repeat(64));
    expect(early < late).toBe(true);
    const created = orderKey(0, 'campaign.created', 'f');
    const changed = orderKey(0, 'campaign.status_changed', '0');
    expect(created < changed).toBe(true);
    expect(orderKey(0, 'credits.low', 'a') < orderKey(0, 'credits.low', 'b')).toBe(true);
    expect(orderKey(-86_400_000, 'credits.low', 'a') < orderKey(0, 'credits.low', 'a')).toBe(true);
    expect(Object.values(KIND_RANKS).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // As text, keys of one instant sort by rank, the two-digit ranks of reconciliation's kinds included.
    const kinds = Object.keys(KIND_RANKS) as Array<keyof typeof KIND_RANKS>;
    const sorted = kinds.map((kind) => ({ kind, key: orderKey(0, kind, 'a') })).sort((a, b) => (a.key < b.key ? -1 : 1));
    expect(sorted.map((k) => KIND_RANKS[k.kind])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // Keys stored before those kinds existed are unchanged.
    expect(orderKey(0, 'credits.depleted', 'a')).toBe('08640000000000000:9:a');
  });
});
