import fc from 'fast-check';
import type { WebhookEvent } from '../../src/events/index.js';

// A small world so that random events collide: two campaigns, four candidates, a handful of
// instants (equal instants are common), several offsets for the same instant.
const CAMPAIGNS = ['cmp_A', 'cmp_B'];
const CANDIDATES = ['cand-1', 'cand-2', 'cand-3', 'cand-4'];
const BASE = Date.UTC(2026, 10, 20, 10, 0, 0);

/** Writes an instant as ISO 8601 in the given UTC offset (minutes). */
export function atOffset(instant: number, offsetMinutes: number): string {
  const local = new Date(instant + offsetMinutes * 60_000).toISOString().slice(0, -1);
  if (offsetMinutes === 0) return `${local}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const timestamp = (instants: number[]) =>
  fc.tuple(fc.constantFrom(...instants), fc.constantFrom(0, 60, -300, 330)).map(([i, o]) => atOffset(i, o));

// A field that may be absent, null or a value: docs/projection.md treats the three differently.
const maybe = <T>(value: fc.Arbitrary<T>) => fc.option(fc.option(value, { nil: null }), { nil: undefined });
const name = fc.constantFrom('Éloïse', 'Loïc', 'Gaëlle', 'Benoît');
const text = fc.constantFrom('Disponible immédiatement', 'Préavis d’un mois', '32 000 € brut annuel', 'Très motivé');

function withOptional(required: Record<string, unknown>, optional: Record<string, unknown>) {
  const data: Record<string, unknown> = { ...required };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) data[key] = value;
  return data;
}

function dataOf(kind: string): fc.Arbitrary<Record<string, unknown>> {
  const campaign_id = fc.constantFrom(...CAMPAIGNS);
  const candidate_id = fc.constantFrom(...CANDIDATES);
  const names = { first_name: maybe(name), last_name: maybe(name) };
  const completed = {
    ...names,
    email: maybe(fc.constantFrom('a@exemple.fr', 'b@exemple.fr')),
    phone: maybe(fc.constantFrom('+33612345678', '+33798765432')),
    availability: maybe(text),
    availability_start: maybe(fc.constantFrom('2026-12-01', '2027-01-04')),
    salary_expectation: maybe(text),
    candidate_alignment: maybe(text),
    strengths: maybe(text),
    concerns: maybe(text),
  };
  const response = fc.record({ question: fc.constantFrom('Q1', 'Q2'), answer: text, score: fc.constantFrom(0, 5, 10), explanation: text });
  switch (kind) {
    case 'campaign.created':
      return fc
        .record({
          campaign_id,
          status: fc.constantFrom('active'),
          job_title: maybe(text),
          contract_type: maybe(fc.constantFrom('CDI', 'Intérim')),
          candidate_link: maybe(fc.constantFrom('https://x.test/a', 'https://x.test/b')),
          questions_count: maybe(fc.integer({ min: 0, max: 10 })),
        })
        .map(({ campaign_id, status, ...o }) => withOptional({ campaign_id, status }, o));
    case 'campaign.status_changed':
      return fc
        .record({
          campaign_id,
          new_status: fc.constantFrom('active', 'paused', 'completed'),
          old_status: maybe(fc.constantFrom('active', 'paused')),
          job_title: maybe(text),
        })
        .map(({ campaign_id, new_status, ...o }) => withOptional({ campaign_id, new_status }, o));
    case 'candidate.added':
      return fc
        .record({ campaign_id, candidate_id, ...names, email: completed.email, phone: completed.phone, call_queued: maybe(fc.boolean()) })
        .map(({ campaign_id, candidate_id, ...o }) => withOptional({ campaign_id, candidate_id }, o));
    case 'candidate.sourced':
      return fc
        .record({ campaign_id, candidate_id, ...names, phone: completed.phone, sms_sent: maybe(fc.boolean()) })
        .map(({ campaign_id, candidate_id, ...o }) => withOptional({ campaign_id, candidate_id }, o));
    case 'candidate.interview.started':
      return fc
        .record({ campaign_id, candidate_id, ...names })
        .map(({ campaign_id, candidate_id, ...o }) => withOptional({ campaign_id, candidate_id }, o));
    case 'candidate.interview.failed':
      return fc
        .record({
          campaign_id,
          candidate_id,
          failure_reason: fc.constantFrom('voicemail', 'no_answer', 'user_hangup', 'technical_error'),
          ...names,
        })
        .map(({ campaign_id, candidate_id, failure_reason, ...o }) => withOptional({ campaign_id, candidate_id, failure_reason }, o));
    case 'candidate.interview.completed':
      return fc
        .record({ campaign_id, candidate_id, interview_score: fc.constantFrom(4, 6.5, 8, 9.5), ...completed })
        .map(({ campaign_id, candidate_id, interview_score, ...o }) => withOptional({ campaign_id, candidate_id, interview_score }, o));
    case 'candidate.interview.completed.extended':
      return fc
        .record({
          campaign_id,
          candidate_id,
          interview_score: fc.constantFrom(4, 6.5, 8, 9.5),
          responses: fc.array(response, { maxLength: 3 }),
          ...completed,
        })
        .map(({ campaign_id, candidate_id, interview_score, responses, ...o }) =>
          withOptional({ campaign_id, candidate_id, interview_score, responses }, o),
        );
    case 'credits.low':
      return fc.record({ credits_remaining: fc.constantFrom(9.75, 5, 1), threshold: fc.constantFrom(10, 5) });
    case 'credits.depleted':
      return fc
        .record({ credits_remaining: fc.constant(0), last_campaign_id: maybe(campaign_id) })
        .map(({ credits_remaining, ...o }) => withOptional({ credits_remaining }, o));
    // Reconciliation's repairs: any subset of the fields it reads, instants in any spelling.
    case 'reconcile.campaign':
      return fc
        .record({
          campaign_id,
          job_title: maybe(text),
          status: maybe(fc.constantFrom('active', 'paused', 'completed')),
          created_at: maybe(timestamp([BASE, BASE + 60_000])),
        })
        .map(({ campaign_id, ...o }) => withOptional({ campaign_id }, o));
    case 'reconcile.candidate':
      return fc
        .record({
          campaign_id,
          candidate_id,
          ...names,
          email: completed.email,
          phone: completed.phone,
          status: maybe(fc.constantFrom('pending', 'completed', 'voicemail', 'incomplete')),
          interview_score: maybe(fc.constantFrom(4, 6.5, 8)),
          interview_date: maybe(timestamp([BASE, BASE + 60_000])),
          availability: completed.availability,
          strengths: completed.strengths,
          is_sourced: fc.option(fc.boolean(), { nil: undefined }),
          failure_reason: maybe(fc.constantFrom('voicemail', 'no_answer')),
        })
        .map(({ campaign_id, candidate_id, ...o }) => withOptional({ campaign_id, candidate_id }, o));
    case 'reconcile.credits':
      return fc.record({ credits_remaining: fc.constantFrom(12.5, 3, 0) });
    default:
      throw new Error(kind);
  }
}

const KINDS = [
  'campaign.created',
  'campaign.status_changed',
  'candidate.added',
  'candidate.sourced',
  'candidate.interview.started',
  'candidate.interview.failed',
  'candidate.interview.completed',
  'candidate.interview.completed.extended',
  'credits.low',
  'credits.depleted',
  'reconcile.campaign',
  'reconcile.candidate',
  'reconcile.credits',
];

/** One valid event of any kind, at one of `instants` (default: four instants a minute apart, with millisecond neighbours). */
export function eventArbitrary(instants: number[] = [BASE, BASE + 1, BASE + 60_000, BASE + 120_000]): fc.Arbitrary<WebhookEvent> {
  return fc
    .constantFrom(...KINDS)
    .chain((kind) => fc.record({ event: fc.constant(kind), timestamp: timestamp(instants), data: dataOf(kind) }))
    .map((e) => e as unknown as WebhookEvent);
}

/** A stream: distinct-ish events, then a permutation of them with some repeated. */
export function streamArbitrary(maxLength = 40, instants?: number[]) {
  return fc.array(eventArbitrary(instants), { minLength: 1, maxLength }).chain((events) =>
    fc
      .shuffledSubarray(events, { minLength: 0, maxLength: events.length })
      .map((repeats) => [...events, ...repeats])
      .chain((withRepeats) => fc.shuffledSubarray(withRepeats, { minLength: withRepeats.length, maxLength: withRepeats.length }))
      .map((delivered) => ({ events, delivered })),
  );
}

export { BASE };

// ---------------------------------------------------------------------------------------------
// Arbitrary JSON values for the identity properties: keys that plain assignment mishandles
// (`__proto__`, `constructor`), array-index keys (JSON.stringify reorders them), astral and
// escaped characters, keys that sort differently by UTF-16 unit and by code point, extreme
// numbers. Objects are built with Object.fromEntries, which defines own keys as JSON.parse does.

const CHARS = [
  'a',
  'b',
  'é',
  'e\u0301',
  '\u0000',
  '"',
  '\\',
  '/',
  '\n',
  '\u2028',
  '\u007f',
  '\uE000',
  '\uFF21',
  '\uFFFF',
  '\u{1F600}',
  '\u{10FFFF}',
];
const KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '0',
  '1',
  '9',
  '10',
  '01',
  '-1',
  '',
  'a',
  'A',
  'é',
  '\uFF21',
  '\u{1F600}',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  1 / 3,
  100,
  1e21,
  1e-7,
  2 ** 53,
  2 ** 53 + 2,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  Number.MAX_SAFE_INTEGER,
];

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * JSON values. `small` draws keys and leaves from short lists, so that equal values (and values
 * that differ in one leaf) are common; otherwise strings and numbers range widely.
 */
export function jsonArbitrary(options: { small?: boolean; depth?: number } = {}): fc.Arbitrary<Json> {
  const key = options.small
    ? fc.constantFrom(...KEYS)
    : fc.oneof(fc.constantFrom(...KEYS), fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 4 }));
  const text = options.small
    ? fc.constantFrom('', 'a', 'é', 'e\u0301', '\u{1F600}')
    : fc.oneof(fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 6 }));
  const number = options.small
    ? fc.constantFrom(0, -0, 1, 1e21, Number.MAX_VALUE, Number.MIN_VALUE)
    : fc.oneof(fc.constantFrom(...NUMBERS), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer());
  const { value } = fc.letrec<{ value: Json }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', maxDepth: options.depth ?? 4 },
      fc.constant(null),
      fc.boolean(),
      number,
      text,
      fc.array(tie('value'), { maxLength: 3 }),
      fc
        .uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, maxLength: 4 })
        .map((entries) => Object.fromEntries(entries) as Json),
    ),
  }));
  return value;
}

/** Whether two JSON values are the same value: key order does not count, numbers compare as doubles (0 equals -0). */
export function sameJson(a: Json, b: Json): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]!));
  }
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k]!, b[k]!));
}

/** A small deterministic generator for the choices of `spellJson` (mulberry32). */
function choices(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return { below: (n: number) => Math.floor(next() * n), chance: (p: number) => next() < p };
}

const hex4 = (unit: number) => `\\u${unit.toString(16).padStart(4, '0')}`;

/**
 * The JSON text of a value, spelled one of many ways that all parse to the same value: keys in
 * a shuffled order, white space between tokens, characters escaped (`\u00e9`, surrogate pairs),
 * numbers in other notations (`1e2`, `100.0`, `1E+2`).
 */
export function spellJson(value: Json, seed: number): string {
  const pick = choices(seed);
  const space = () => (pick.chance(0.3) ? [' ', '\n', '\t', '\r\n  '][pick.below(4)]! : '');
  const string = (s: string) => {
    let out = '"';
    for (const char of s) {
      const plain = JSON.stringify(char).slice(1, -1);
      if (!pick.chance(0.3)) out += plain;
      else if (char === '/') out += '\\/';
      else for (let i = 0; i < char.length; i++) out += hex4(char.charCodeAt(i));
    }
    return `${out}"`;
  };
  const number = (n: number) => {
    const shortest = JSON.stringify(n);
    switch (pick.below(4)) {
      case 0:
        return n.toExponential().replace('e+', pick.chance(0.5) ? 'E+' : 'e');
      case 1:
        return Number.isInteger(n) && Math.abs(n) < 1e21 ? `${shortest}.0` : shortest;
      case 2:
        return Object.is(n, -0) ? '-0' : shortest;
      default:
        return shortest;
    }
  };
  const write = (v: Json): string => {
    if (v === null || typeof v === 'boolean') return String(v);
    if (typeof v === 'number') return number(v);
    if (typeof v === 'string') return string(v);
    if (Array.isArray(v)) return `[${space()}${v.map((item) => `${write(item)}${space()}`).join(`,${space()}`)}]`;
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i > 0; i--) {
      const j = pick.below(i + 1);
      [keys[i], keys[j]] = [keys[j]!, keys[i]!];
    }
    return `{${space()}${keys.map((k) => `${string(k)}${space()}:${space()}${write(v[k]!)}${space()}`).join(`,${space()}`)}}`;
  };
  return `${space()}${write(value)}${space()}`;
}
