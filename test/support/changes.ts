// Whole rows for the changes a test makes by hand: a Change's row has every column of its table.
import type { CampaignChangeRow, CandidateChangeRow, CreditsChangeRow } from '../../src/project/changes.js';

export function campaignRow(columns: Partial<CampaignChangeRow> & { campaign_id: string }): CampaignChangeRow {
  return { job_title: null, contract_type: null, candidate_link: null, questions_count: null, status: null, created_at: null, ...columns };
}

export function candidateRow(columns: Partial<CandidateChangeRow> & { candidate_id: string }): CandidateChangeRow {
  return {
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
    ...columns,
  };
}

export function creditsRow(columns: Partial<CreditsChangeRow>): CreditsChangeRow {
  return { credits_remaining: null, low_threshold: null, last_campaign_id: null, ...columns };
}
