// The tables of docs/projection.md section 4 as rows (booleans as booleans; SQLite stores them as
// 0/1, PostgreSQL as boolean): the schema the engines store and the fold computes.

/** A projected campaign (docs/projection.md section 4). Null: no event has said yet. */
export interface CampaignRow {
  /** The service's campaign id. */
  campaign_id: string;
  /** The job the campaign recruits for. */
  job_title: string | null;
  /** The contract offered, as the service names it. */
  contract_type: string | null;
  /** The link candidates apply through. */
  candidate_link: string | null;
  /** How many interview questions it asks. */
  questions_count: number | null;
  /** `active`, `paused` or `completed`. */
  status: string | null;
  /** When it was created (the `campaign.created` event's timestamp): UTC ISO 8601. */
  created_at: string | null;
}

/** A projected candidate (docs/projection.md section 4). Null: no event has said yet. */
export interface CandidateRow {
  /** The service's candidate id. */
  candidate_id: string;
  /** The campaign the candidate applied to. */
  campaign_id: string | null;
  /** First name. */
  first_name: string | null;
  /** Last name. */
  last_name: string | null;
  /** E-mail address, as sent. */
  email: string | null;
  /** Phone number, as sent. */
  phone: string | null;
  /** Whether the candidate was sourced (invited by SMS) rather than added. */
  is_sourced: boolean;
  /** Whether the service queued a call when the candidate was added. */
  call_queued: boolean | null;
  /** Whether the service sent the sourcing SMS. */
  sms_sent: boolean | null;
  /** `pending` until the interview ends: `completed`, or `voicemail` / `incomplete` when it failed. */
  status: 'pending' | 'completed' | 'voicemail' | 'incomplete' | null;
  /** The interview's score, 0 to 10. */
  interview_score: number | null;
  /** When the interview completed: UTC ISO 8601. */
  interview_date: string | null;
  /** When the interview started: UTC ISO 8601. */
  interview_started_at: string | null;
  /** When the candidate can start, in their words. */
  availability: string | null;
  /** The start date the interview gathered, as the service wrote it. */
  availability_start: string | null;
  /** The salary the candidate expects, in their words. */
  salary_expectation: string | null;
  /** The interview's assessment of how the candidate fits the job. */
  candidate_alignment: string | null;
  /** Strengths the interview noted. */
  strengths: string | null;
  /** Concerns the interview noted. */
  concerns: string | null;
  /** Why the last interview failed (`voicemail`, `no_answer`, `user_hangup`, `technical_error`); null once one completes. */
  failure_reason: string | null;
  /** When the candidate was added or sourced: the candidate list's date when there is no interview. */
  added_at: string | null;
}

/** One question of a completed interview and how the candidate answered it. */
export interface InterviewResponse {
  /** The question asked. */
  question: string | null;
  /** The candidate's answer, as transcribed. */
  answer: string | null;
  /** The answer's score, 0 to 10. */
  score: number | null;
  /** Why the answer got its score. */
  explanation: string | null;
}

/** The account's projected credits. Null: no event has said yet. */
export interface CreditsRow {
  /** Credits left. */
  credits_remaining: number | null;
  /** The threshold the last `credits.low` event reported. */
  low_threshold: number | null;
  /** The campaign that used the last credits (`credits.depleted`). */
  last_campaign_id: string | null;
}

export const CAMPAIGN_COLUMNS = ['job_title', 'contract_type', 'candidate_link', 'questions_count', 'status', 'created_at'] as const;
export const CANDIDATE_COLUMNS = [
  'campaign_id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'is_sourced',
  'call_queued',
  'sms_sent',
  'status',
  'interview_score',
  'interview_date',
  'interview_started_at',
  'availability',
  'availability_start',
  'salary_expectation',
  'candidate_alignment',
  'strengths',
  'concerns',
  'failure_reason',
  'added_at',
] as const;
/** A candidate's key and columns, as a select list. */
export const CANDIDATE_SELECT = `candidate_id, ${CANDIDATE_COLUMNS.join(', ')}`;
export const CREDITS_COLUMNS = ['credits_remaining', 'low_threshold', 'last_campaign_id'] as const;

export function emptyCampaign(campaign_id: string): CampaignRow {
  return { campaign_id, job_title: null, contract_type: null, candidate_link: null, questions_count: null, status: null, created_at: null };
}

export function emptyCandidate(candidate_id: string): CandidateRow {
  return {
    candidate_id,
    campaign_id: null,
    first_name: null,
    last_name: null,
    email: null,
    phone: null,
    is_sourced: false,
    call_queued: null,
    sms_sent: null,
    status: null,
    interview_score: null,
    interview_date: null,
    interview_started_at: null,
    availability: null,
    availability_start: null,
    salary_expectation: null,
    candidate_alignment: null,
    strengths: null,
    concerns: null,
    failure_reason: null,
    added_at: null,
  };
}

export function emptyCredits(): CreditsRow {
  return { credits_remaining: null, low_threshold: null, last_campaign_id: null };
}

/** Candidate rows as users read them from the API: booleans as booleans (SQLite stores them as 0/1). */
export function decodeCandidate(row: Record<string, unknown>): CandidateRow {
  const flag = (v: unknown) => (v === null || v === undefined ? null : v === 1 || v === true);
  return {
    ...(row as unknown as CandidateRow),
    is_sourced: row.is_sourced === 1 || row.is_sourced === true,
    call_queued: flag(row.call_queued),
    sms_sent: flag(row.sms_sent),
  };
}
