#!/usr/bin/env node
// Prints the text of a dictionary for deflating stored bodies (src/store/body-dictionary.ts): the
// shapes of the service's events, from fixtures/events, as the service sends them (compact JSON,
// keys in its order), with every value that could name a person emptied. What stays: keys, kinds,
// the enumerations' values (statuses, failure reasons, contract types), booleans, and the fixed
// prefixes of ids and phones ("cmp_", "+33"). Deflate finds a match cheaper the nearer it lies to
// the end of the dictionary, so the kinds sent most (candidates') come last.
//
// A dictionary, once shipped, never changes: rows compressed with it must stay readable. Run this
// again only to make the next one (a new codec number beside the old).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/events/', import.meta.url));
/** Keys whose values are one of a few the contract lists: no one is named by them. */
const ENUMERATED = new Set(['status', 'old_status', 'new_status', 'contract_type', 'failure_reason']);
/** Keys whose values start the same for everyone: the prefix is kept, the rest emptied. */
const PREFIXES = { campaign_id: 'cmp_', last_campaign_id: 'cmp_', phone: '+33', candidate_link: 'https://' };
const ENUMERATIONS = {
  status: ['active', 'paused', 'completed', 'pending', 'voicemail', 'incomplete'],
  failure_reason: ['voicemail', 'no_answer', 'user_hangup', 'technical_error'],
  contract_type: ['CDI', 'CDD', 'Intérim', 'Alternance', 'Stage'],
};
/** Most sent last. */
const ORDER = [
  'credits.low',
  'credits.depleted',
  'campaign.status_changed',
  'campaign.created',
  'candidate.interview.failed',
  'candidate.interview.completed.extended',
  'candidate.interview.completed',
  'candidate.sourced',
  'candidate.interview.started',
  'candidate.added',
];

function shape(key, value) {
  if (typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'number') return 0;
  if (typeof value === 'string') return ENUMERATED.has(key) ? value : (PREFIXES[key] ?? '');
  if (Array.isArray(value)) return value.slice(0, 1).map((v) => shape(key, v));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(k, v)]));
}

const kinds = new Map(
  readdirSync(FIXTURES).map((file) => {
    const event = JSON.parse(readFileSync(`${FIXTURES}${file}`, 'utf8'));
    return [file.replace(/\.json$/, ''), { event: event.event, timestamp: '', data: shape('data', event.data) }];
  }),
);
const enumerations = Object.entries(ENUMERATIONS).flatMap(([key, values]) => values.map((v) => `"${key}":"${v}"`));
const skeletons = ORDER.filter((name) => kinds.has(name)).map((name) => JSON.stringify(kinds.get(name)));
process.stdout.write(`${enumerations.join(',')},"timestamp":"2026-01-01T00:00:00.000Z",${skeletons.join('')}`);
