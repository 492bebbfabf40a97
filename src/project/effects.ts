import { formatInstant, parseInstant, type WebhookEvent } from '../events/index.js';
import type { CampaignRow, CandidateRow, CreditsRow, InterviewResponse } from '../tables/rows.js';

/**
 * What one event does (docs/projection.md section 3), as plain assignments: every effect sets
 * columns to values and reads nothing, which is what makes last-writer-wins per column
 * equal to in-order application.
 */
export type Effect =
  | { table: 'campaigns'; key: string; set: Partial<Omit<CampaignRow, 'campaign_id'>> }
  | { table: 'candidates'; key: string; set: Partial<Omit<CandidateRow, 'candidate_id'>> & { responses?: InterviewResponse[] } }
  | { table: 'credits'; key: 'account'; set: Partial<CreditsRow> };

// The data fields each kind carries that set a column of the same name (service Events table).
const CARRIED: Record<string, readonly string[]> = {
  'campaign.created': ['job_title', 'contract_type', 'candidate_link', 'questions_count', 'status'],
  'campaign.status_changed': ['job_title'],
  'candidate.added': ['campaign_id', 'first_name', 'last_name', 'email', 'phone', 'call_queued'],
  'candidate.sourced': ['campaign_id', 'first_name', 'last_name', 'phone', 'sms_sent'],
  'candidate.interview.started': ['campaign_id', 'first_name', 'last_name'],
  'candidate.interview.failed': ['campaign_id', 'first_name', 'last_name', 'failure_reason'],
  'candidate.interview.completed': [
    'campaign_id',
    'first_name',
    'last_name',
    'email',
    'phone',
    'interview_score',
    'availability',
    'availability_start',
    'salary_expectation',
    'candidate_alignment',
    'strengths',
    'concerns',
  ],
  'credits.low': ['credits_remaining'],
  'credits.depleted': ['credits_remaining', 'last_campaign_id'],
  'reconcile.campaign': ['job_title', 'status', 'created_at'],
  'reconcile.candidate': [
    'campaign_id',
    'first_name',
    'last_name',
    'email',
    'phone',
    'status',
    'interview_score',
    'interview_date',
    'availability',
    'salary_expectation',
    'candidate_alignment',
    'strengths',
    'concerns',
    'is_sourced',
    'failure_reason',
  ],
  'reconcile.credits': ['credits_remaining'],
};
// Instants a reading carries are stored as every other timestamp: UTC with milliseconds.
const INSTANTS = new Set(['created_at', 'interview_date']);
CARRIED['candidate.interview.completed.extended'] = CARRIED['candidate.interview.completed']!;

/** A field the event carries sets its column, null included; a field it does not carry is left out. */
function carried(kind: string, data: Record<string, unknown>): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const field of CARRIED[kind]!) {
    if (!(field in data)) continue;
    const value = data[field] ?? null;
    set[field] = INSTANTS.has(field) && typeof value === 'string' ? formatInstant(parseInstant(value)!) : value;
  }
  return set;
}

export function effectsOf(event: WebhookEvent, instant: number): Effect[] {
  const at = formatInstant(instant);
  const data = event.data as Record<string, unknown>;
  const set = carried(event.event, data);
  switch (event.event) {
    case 'campaign.created':
      return [{ table: 'campaigns', key: event.data.campaign_id, set: { ...set, created_at: at } }];
    case 'campaign.status_changed':
      return [{ table: 'campaigns', key: event.data.campaign_id, set: { ...set, status: event.data.new_status } }];
    case 'credits.low':
      return [{ table: 'credits', key: 'account', set: { ...set, low_threshold: event.data.threshold } }];
    case 'credits.depleted':
    case 'reconcile.credits':
      return [{ table: 'credits', key: 'account', set }];
    case 'reconcile.campaign':
      return [{ table: 'campaigns', key: event.data.campaign_id, set }];
    default:
      break;
  }
  // Every candidate event names a campaign, which exists from then on (all columns null until
  // its campaign.created arrives).
  const campaign: Effect = { table: 'campaigns', key: event.data.campaign_id, set: {} };
  const candidate = (extra: Record<string, unknown>): Effect => ({
    table: 'candidates',
    key: event.data.candidate_id,
    set: { ...set, ...extra },
  });
  switch (event.event) {
    case 'candidate.added':
      return [campaign, candidate({ status: 'pending', added_at: at })];
    case 'candidate.sourced':
      return [campaign, candidate({ is_sourced: true, status: 'pending', added_at: at })];
    case 'candidate.interview.started':
      return [campaign, candidate({ interview_started_at: at })];
    case 'reconcile.candidate':
      return [campaign, candidate({})];
    case 'candidate.interview.failed':
      return [campaign, candidate({ status: event.data.failure_reason === 'voicemail' ? 'voicemail' : 'incomplete' })];
    case 'candidate.interview.completed':
      return [campaign, candidate({ status: 'completed', interview_date: at, failure_reason: null })];
    case 'candidate.interview.completed.extended':
      return [
        campaign,
        candidate({
          status: 'completed',
          interview_date: at,
          failure_reason: null,
          responses: event.data.responses.map((r) => ({
            question: r.question ?? null,
            answer: r.answer ?? null,
            score: r.score ?? null,
            explanation: r.explanation ?? null,
          })),
        }),
      ];
  }
}
