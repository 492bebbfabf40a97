// Deterministic, index-addressable event stream for the benchmarks.
//
// Distinct event d (0 <= d < distinct) is a pure function of (seed, d): the stream is laid out as
// "units" (one campaign unit, then its 200 candidate units, then the next campaign …), each unit
// a short story whose events are decided by a PRNG seeded with the unit's number. Only the
// per-unit event counts are kept in memory (one byte per unit plus a prefix sum), so any event can
// be rebuilt on demand: the scenario writer can emit a globally shuffled file without holding it,
// and the HTTP pool can draw as many distinct events as a round needs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataOf, EventOf, ServiceEventKind } from 'prequal-hooks';
import { ROOT } from './paths.js';

/** An event as the service sends it, typed by the package's own schemas. */
export type ServiceEvent = EventOf<ServiceEventKind>;

const FIXTURES = join(ROOT, 'fixtures', 'events');
const fixture = <K extends ServiceEventKind>(kind: K): EventOf<K> =>
  JSON.parse(readFileSync(join(FIXTURES, `${kind}.json`), 'utf8')) as EventOf<K>;

const CANDIDATES_PER_CAMPAIGN = 200;
const UNITS_PER_BLOCK = CANDIDATES_PER_CAMPAIGN + 1;
const T0 = Date.UTC(2026, 0, 5, 7, 30, 0); // first campaign: 5 January 2026, 07:30 UTC
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** mulberry32: tiny, fast, good enough to decide stories and shuffle. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit mix of two integers (seeding one PRNG per unit). */
export function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

const FIRST = [
  'Kévin',
  'Anaïs',
  'Gwenaëlle',
  'Éloïse',
  'Loïc',
  'Gaëlle',
  'Benoît',
  'Camille',
  'Mathis',
  'Inès',
  'Yannick',
  'Sofiane',
  'Chloé',
  'Théo',
  'Aïcha',
  'Jérôme',
  'Manon',
  'Nicolas',
  'Léa',
  'Mehdi',
  'Océane',
  'Bastien',
  'Fatou',
  'Hélène',
];
const LAST = [
  'Lemaître',
  'Perrin',
  "Le Floc'h",
  'Marchand',
  'Le Gall',
  "N'Diaye",
  'Müller',
  'Bernard',
  'Dubois',
  'Moreau',
  'Laurent',
  'Girard',
  'Bonnet',
  'Dupont',
  'Lambert',
  'Fontaine',
  'Rousseau',
  'Vincent',
  'Muller',
  'Lefèvre',
  'Mercier',
  'Boyer',
  'Garnier',
  'Chevalier',
];
const DOMAINS = ['gmail.com', 'orange.fr', 'hotmail.fr', 'laposte.net', 'free.fr', 'sfr.fr', 'yahoo.fr'];
const JOBS: readonly (readonly [jobTitle: string, contract: string])[] = [
  ['Cariste CACES 3', 'CDD'],
  ['Préparateur de commandes H/F', 'Intérim'],
  ['Agent de quai', 'CDI'],
  ['Magasinier', 'CDI'],
  ['Chauffeur livreur VL', 'CDD'],
  ['Opérateur de production', 'Intérim'],
];
const FAILURES: readonly FailureReason[] = [
  'voicemail',
  'voicemail',
  'voicemail',
  'voicemail',
  'no_answer',
  'no_answer',
  'no_answer',
  'user_hangup',
  'user_hangup',
  'technical_error',
];

const completedFixture = fixture('candidate.interview.completed').data;
const responsesFixture = fixture('candidate.interview.completed.extended').data.responses;

type CampaignStatus = DataOf<'campaign.created'>['status'];
type FailureReason = DataOf<'candidate.interview.failed'>['failure_reason'];

interface Campaign {
  id: string;
  code: string;
  jobTitle: string;
  contract: string;
  questions: number;
  createdAt: number;
}

/** A candidate's draws: numbers only, strings made in `build` for the one event asked for. */
interface Someone {
  id: [number, number, number, number];
  first: string;
  last: string;
  mailNumber: number;
  domain: string;
  phone: number;
  score: number;
}

/** One event of a story, not built yet: its kind, instant (ms) and what the kind needs. */
type Step =
  | readonly ['campaign.status_changed', number, { old: CampaignStatus; next: CampaignStatus }]
  | readonly ['credits.low', number, { credits: number }]
  | readonly ['candidate.interview.failed', number, { reason: FailureReason }]
  | readonly [Exclude<ServiceEventKind, 'campaign.status_changed' | 'credits.low' | 'candidate.interview.failed'>, number];

interface Story {
  campaign: Campaign;
  person: Someone | null;
  steps: Step[];
}

const ascii = (s: string): string =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();
const ASCII = new Map([...FIRST, ...LAST].map((name) => [name, ascii(name)]));
const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
const iso = (ms: number): string => new Date(ms).toISOString();

const u32 = (r: () => number): number => Math.floor(r() * 0x100000000);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const hex = (n: number): string => HEX[n >>> 24]! + HEX[(n >>> 16) & 255]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!;

/** A v4-looking UUID from four 32-bit numbers (drawn in `story`, formatted only when built). */
function uuid([a, b, c, d]: Someone['id']): string {
  const hb = hex(b);
  const hc = hex(c);
  return `${hex(a)}-${hb.slice(0, 4)}-4${hb.slice(5, 8)}-${'89ab'[c & 3]}${hc.slice(1, 4)}-${hc.slice(4)}${hex(d)}`;
}

function campaignOf(block: number, seed: number): Campaign {
  const r = prng(mix(seed ^ 0x5eed, block));
  const [jobTitle, contract] = pick(r, JOBS);
  const code = hex(u32(r)).slice(0, 5) + block.toString(36).padStart(5, '0');
  return {
    id: `cmp_${code}`,
    code,
    jobTitle,
    contract,
    questions: 4 + Math.floor(r() * 5),
    createdAt: T0 + block * 37 * MINUTE + Math.floor(r() * 1000),
  };
}

/**
 * The story of one unit: a list of [kind, instant, detail] with no objects built yet, so that
 * counting and locating events stay cheap.
 */
function story(unit: number, seed: number): Story {
  const block = Math.floor(unit / UNITS_PER_BLOCK);
  const slot = unit % UNITS_PER_BLOCK;
  const r = prng(mix(seed, unit));
  const campaign = campaignOf(block, seed);
  const steps: Step[] = [];
  if (slot === 0) {
    steps.push(['campaign.created', campaign.createdAt]);
    let at = campaign.createdAt;
    let status: CampaignStatus = 'active';
    const changes = r() < 0.6 ? 1 + Math.floor(r() * 2) : 0;
    for (let i = 0; i < changes; i++) {
      at += Math.floor((1 + r() * 6) * DAY);
      const next: CampaignStatus = status === 'active' ? (i === changes - 1 && r() < 0.5 ? 'completed' : 'paused') : 'active';
      steps.push(['campaign.status_changed', at, { old: status, next }]);
      status = next;
    }
    if (r() < 0.3) steps.push(['credits.low', campaign.createdAt + Math.floor(r() * 10 * DAY), { credits: Math.round(r() * 200) / 10 }]);
    if (r() < 0.08) steps.push(['credits.depleted', campaign.createdAt + Math.floor((10 + r() * 5) * DAY)]);
    return { campaign, person: null, steps };
  }
  // Numbers only here; strings are made in `build`, for the one event asked for.
  const person: Someone = {
    id: [u32(r), u32(r), u32(r), u32(r)],
    first: pick(r, FIRST),
    last: pick(r, LAST),
    mailNumber: Math.floor(r() * 100),
    domain: pick(r, DOMAINS),
    phone: 6e8 + Math.floor(r() * 2e8),
    score: Math.round(r() * 100) / 10,
  };
  let at = campaign.createdAt + Math.floor(r() * 14 * DAY);
  const sourced = r() < 0.3;
  steps.push([sourced ? 'candidate.sourced' : 'candidate.added', at]);
  let attempts = r() < (sourced ? 0.6 : 0.8) ? 1 : 0;
  while (attempts > 0) {
    attempts--;
    at += Math.floor((1 + r() * 120) * MINUTE);
    steps.push(['candidate.interview.started', at]);
    at += Math.floor((3 + r() * 15) * MINUTE) + Math.floor(r() * 1000);
    const outcome = r();
    if (outcome < 0.3) steps.push(['candidate.interview.completed', at]);
    else if (outcome < 0.5) {
      // The service sends both for the same interview: same instant, same fields.
      steps.push(['candidate.interview.completed', at]);
      steps.push(['candidate.interview.completed.extended', at]);
    } else {
      const reason = pick(r, FAILURES);
      steps.push(['candidate.interview.failed', at, { reason }]);
      if ((reason === 'voicemail' || reason === 'no_answer') && r() < 0.5 && steps.length < 5) attempts++;
    }
  }
  return { campaign, person, steps };
}

function build(campaign: Campaign, someone: Someone | null, step: Step): ServiceEvent {
  const timestamp = iso(step[1]);
  switch (step[0]) {
    case 'campaign.created':
      return {
        event: step[0],
        timestamp,
        data: {
          campaign_id: campaign.id,
          job_title: campaign.jobTitle,
          contract_type: campaign.contract,
          candidate_link: `https://postuler.prequal.example/c/${campaign.code}`,
          questions_count: campaign.questions,
          status: 'active',
        },
      };
    case 'campaign.status_changed':
      return {
        event: step[0],
        timestamp,
        data: { campaign_id: campaign.id, job_title: campaign.jobTitle, old_status: step[2].old, new_status: step[2].next },
      };
    case 'credits.low':
      return { event: step[0], timestamp, data: { credits_remaining: step[2].credits, threshold: 25 } };
    case 'credits.depleted':
      return { event: step[0], timestamp, data: { credits_remaining: 0, last_campaign_id: campaign.id } };
    default:
      if (someone === null) throw new Error(`${step[0]} needs a candidate: a campaign unit's story has none`);
      return buildCandidateEvent(campaign, someone, step, timestamp);
  }
}

function buildCandidateEvent(campaign: Campaign, someone: Someone, step: Step, timestamp: string): ServiceEvent {
  const person = {
    id: uuid(someone.id),
    first: someone.first,
    last: someone.last,
    email: `${ASCII.get(someone.first)}.${ASCII.get(someone.last)}${someone.mailNumber}@${someone.domain}`,
    phone: `+33${someone.phone}`,
    score: someone.score,
  };
  const names = { campaign_id: campaign.id, candidate_id: person.id, first_name: person.first, last_name: person.last };
  switch (step[0]) {
    case 'candidate.added':
      return { event: step[0], timestamp, data: { ...names, email: person.email, phone: person.phone, call_queued: true } };
    case 'candidate.sourced':
      return { event: step[0], timestamp, data: { ...names, phone: person.phone, sms_sent: true } };
    case 'candidate.interview.started':
      return { event: step[0], timestamp, data: names };
    case 'candidate.interview.failed':
      return { event: step[0], timestamp, data: { ...names, failure_reason: step[2].reason } };
    case 'candidate.interview.completed':
    case 'candidate.interview.completed.extended': {
      const data = {
        ...names,
        email: person.email,
        phone: person.phone,
        interview_score: person.score,
        availability: completedFixture.availability,
        availability_start: completedFixture.availability_start,
        salary_expectation: completedFixture.salary_expectation,
        candidate_alignment: completedFixture.candidate_alignment,
        strengths: completedFixture.strengths,
        concerns: completedFixture.concerns,
      };
      if (step[0] === 'candidate.interview.completed') return { event: step[0], timestamp, data };
      return {
        event: step[0],
        timestamp,
        data: { ...data, responses: responsesFixture.slice(0, Math.min(responsesFixture.length, campaign.questions)) },
      };
    }
    default:
      throw new Error(`no builder for ${step[0]}`);
  }
}

/**
 * The distinct events of a seed, addressable by index. `extend(n)` lays out units until at
 * least `n` distinct events exist; `eventAt(d)` rebuilds event d.
 */
export interface EventSpace {
  /** Lays out units until at least `n` distinct events exist; returns how many do. */
  extend(n: number): number;
  readonly distinct: number;
  readonly units: number;
  /** Event d as an object (a fresh one each call). */
  eventAt(d: number): ServiceEvent;
  /** Every event of one unit, in story order (for a sequential pass). */
  unitEvents(unit: number): ServiceEvent[];
}

export function createEventSpace(seed = 20261120): EventSpace {
  let counts = new Uint8Array(1 << 16);
  let starts = new Uint32Array(1 << 16); // first distinct index of each unit
  let units = 0;
  let distinct = 0;

  function grow(): void {
    const c = new Uint8Array(counts.length * 2);
    c.set(counts);
    counts = c;
    const s = new Uint32Array(starts.length * 2);
    s.set(starts);
    starts = s;
  }

  function extend(n: number): number {
    while (distinct < n) {
      if (units === counts.length) grow();
      const count = story(units, seed).steps.length;
      counts[units] = count;
      starts[units] = distinct;
      distinct += count;
      units++;
    }
    return distinct;
  }

  function locate(d: number): number {
    let lo = 0;
    let hi = units - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= d) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  return {
    extend,
    get distinct() {
      return distinct;
    },
    get units() {
      return units;
    },
    /** Event d as an object (a fresh one each call). */
    eventAt(d) {
      if (d >= distinct) extend(d + 1);
      const unit = locate(d);
      const { campaign, person, steps } = story(unit, seed);
      const step = steps[d - starts[unit]!];
      if (step === undefined) throw new Error(`event ${d} is not in unit ${unit}'s story`);
      return build(campaign, person, step);
    },
    /** Every event of one unit, in story order (for a sequential pass). */
    unitEvents(unit) {
      const { campaign, person, steps } = story(unit, seed);
      return steps.map((step) => build(campaign, person, step));
    },
  };
}

/**
 * The same event written another way: keys in reverse order, with spaces after ':' and ','.
 * Same identity (docs/projection.md section 1), other bytes.
 */
export function reserialised(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(reserialised).join(', ')}]`;
  return `{${Object.keys(value)
    .reverse()
    .map((k) => `${JSON.stringify(k)}: ${reserialised((value as Record<string, unknown>)[k])}`)
    .join(', ')}}`;
}
