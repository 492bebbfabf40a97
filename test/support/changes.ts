// Whole rows for the changes a test makes by hand: a Change's row has every column of its table.
import type { CampaignChangeRow, CandidateChangeRow, CreditsChangeRow } from '../../src/project/changes.js';
import { emptyCampaign, emptyCandidate, emptyCredits } from '../../src/tables/rows.js';

export function campaignRow(columns: Partial<CampaignChangeRow> & { campaign_id: string }): CampaignChangeRow {
  return { ...emptyCampaign(columns.campaign_id), ...columns };
}

export function candidateRow(columns: Partial<CandidateChangeRow> & { candidate_id: string }): CandidateChangeRow {
  const { added_at: _, ...empty } = emptyCandidate(columns.candidate_id);
  return { ...empty, ...columns };
}

export function creditsRow(columns: Partial<CreditsChangeRow>): CreditsChangeRow {
  return { ...emptyCredits(), ...columns };
}
