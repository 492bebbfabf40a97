// The tables of docs/projection.md section 4 as rows (booleans as booleans; SQLite stores them as
// 0/1, PostgreSQL as boolean): the schema the engines store and the fold computes.

export interface CampaignRow {
  campaign_id: string;
  job_title: string | null;
  contract_type: string | null;
  candidate_link: string | null;
  questions_count: number | null;
  status: string | null;
  created_at: string | null;
}

export interface CandidateRow {
  candidate_id: string;
  campaign_id: string | null;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  is_sourced: boolean;
  call_queued: boolean | null;
  sms_sent: boolean | null;
  status: 'pending' | 'completed' | 'voicemail' | 'incomplete' | null;
  interview_score: number | null;
  interview_date: string | null;
  interview_started_at: string | null;
  availability: string | null;
  availability_start: string | null;
  salary_expectation: string | null;
  candidate_alignment: string | null;
  strengths: string | null;
  concerns: string | null;
  failure_reason: string | null;
  /** When the candidate was added or sourced: the candidate list's date when there is no interview. */
  added_at: string | null;
}

export interface InterviewResponse {
  question: string | null;
  answer: string | null;
  score: number | null;
  explanation: string | null;
}

export interface CreditsRow {
  credits_remaining: number | null;
  low_threshold: number | null;
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
