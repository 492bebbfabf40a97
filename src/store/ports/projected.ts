// Reads of the projected tables by key: what the handlers, reconciliation and the queries see of
// one campaign, one candidate, a campaign's candidates, and the credits.
import type { CampaignRow, CandidateRow, CreditsRow, InterviewResponse } from '../../tables/rows.js';

export interface ProjectedReads {
  /** Every projected campaign's id, in order. */
  campaignIds(): Promise<string[]>;
  campaign(campaignId: string): Promise<CampaignRow | undefined>;
  candidate(candidateId: string): Promise<CandidateRow | undefined>;
  /** The candidates projected under this campaign. */
  candidatesOf(campaignId: string): Promise<CandidateRow[]>;
  /** Those of these candidates that are projected (in no particular order). */
  candidates(candidateIds: readonly string[]): Promise<CandidateRow[]>;
  /** The candidate's interview responses, by position. */
  responses(candidateId: string): Promise<InterviewResponse[]>;
  credits(): Promise<CreditsRow | undefined>;
}
