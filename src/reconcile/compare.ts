// What differs between the service's reading and the projected rows: pure functions, no I/O.
// Each returns the fields to repair, with the projected and the service's value, or nothing.
import type { CampaignStatusResponse } from '../api/campaigns.js';
import type { CandidateRecord } from '../api/candidates.js';
import type { CreditsResponse } from '../api/credits.js';
import { parseInstant } from '../events/index.js';
import type { CampaignRow, CandidateRow, CreditsRow } from '../tables/rows.js';

/** One field that differs: its projected value and the service's. */
export interface FieldDifference {
  /** The value in the projected row (undefined when the row is missing). */
  projected: unknown;
  /** The value the service answered. */
  service: unknown;
}

/** The fields that differ, by column name. */
export type Fields = Record<string, FieldDifference>;

/** Two instants in any ISO 8601 spelling, compared at the projection's precision (ms). */
function sameInstant(a: unknown, b: unknown): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  // Both sides were read from JSON: an instant is a string, anything else is not one.
  const x = typeof a === 'string' ? parseInstant(a) : null;
  const y = typeof b === 'string' ? parseInstant(b) : null;
  return x !== null && x === y;
}

function differing(
  pairs: ReadonlyArray<[field: string, projected: unknown, service: unknown, same?: (a: unknown, b: unknown) => boolean]>,
): Fields {
  const fields: Fields = {};
  for (const [field, projected, service, same] of pairs) {
    if (service === undefined) continue; // not read: nothing to say
    const equal = same ? same(projected, service) : (projected ?? null) === (service ?? null);
    if (!equal) fields[field] = { projected: projected ?? null, service };
  }
  return fields;
}

// The list's text fields that set a column of the same name.
const CANDIDATE_TEXT = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'availability',
  'salary_expectation',
  'candidate_alignment',
  'strengths',
  'concerns',
] as const;

/**
 * A candidate of the service's list against its projected row (undefined when it never arrived).
 * `failure_reason` is not in the list; it follows the status where the status implies it
 * (completed: none; voicemail: `voicemail`), as the webhooks would have set it.
 */
export function compareCandidate(projected: CandidateRow | undefined, read: CandidateRecord, campaignId: string): Fields {
  const row: Partial<CandidateRow> = projected ?? {};
  const fields = differing([
    ['campaign_id', row.campaign_id, campaignId],
    ...CANDIDATE_TEXT.map((f): [string, unknown, unknown] => [f, row[f], read[f]]),
    ['status', row.status, read.status],
    ['interview_score', row.interview_score, read.interview_score],
    ['interview_date', row.interview_date, read.interview_date, sameInstant],
    ['is_sourced', row.is_sourced, read.is_sourced],
  ]);
  const impliedReason = read.status === 'completed' ? null : read.status === 'voicemail' ? 'voicemail' : undefined;
  if (impliedReason !== undefined && (row.failure_reason ?? null) !== impliedReason) {
    fields.failure_reason = { projected: row.failure_reason ?? null, service: impliedReason };
  }
  return fields;
}

/** A campaign's status answer against its projected row. */
export function compareCampaign(projected: CampaignRow | undefined, read: CampaignStatusResponse): Fields {
  const row: Partial<CampaignRow> = projected ?? {};
  return differing([
    ['job_title', row.job_title, read.job_title],
    ['status', row.status, read.status],
    ['created_at', row.created_at, read.created_at, sameInstant],
  ]);
}

/** The account's credits against the projected credits row. */
export function compareCredits(projected: CreditsRow | undefined, read: CreditsResponse): Fields {
  return differing([['credits_remaining', projected?.credits_remaining, read.credits_available]]);
}

/** The data of a repair event: the keys, and each differing field at the service's value. */
export function repairData(keys: Record<string, string>, fields: Fields): Record<string, unknown> {
  const data: Record<string, unknown> = { ...keys };
  for (const [field, { service }] of Object.entries(fields)) data[field] = service;
  return data;
}
