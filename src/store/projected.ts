// The reads of ports/projected.ts, written once for both engines in their own placeholders.
import { placeholders, type EngineSql } from './engine-sql.js';
import type { ProjectedReads } from './ports/projected.js';
import {
  CAMPAIGN_COLUMNS,
  CANDIDATE_SELECT,
  CREDITS_COLUMNS,
  decodeCandidate,
  type CampaignRow,
  type CandidateRow,
  type CreditsRow,
  type InterviewResponse,
} from '../tables/rows.js';

const IDS_PER_READ = 200;

/** The projected rows of one account: every statement binds the account first. */
export function projectedReads(sql: EngineSql, account: string): ProjectedReads {
  const $ = (n: number) => sql.placeholder(n);
  const rows = async <T>(text: string, parameters: readonly unknown[] = []) => await sql.rows<T>(text, parameters);
  // `text` takes its parameters from the second placeholder on: the first is the account.
  const candidates = async (text: string, parameters: readonly unknown[]): Promise<CandidateRow[]> =>
    (
      await rows<Record<string, unknown>>(`SELECT ${CANDIDATE_SELECT} FROM candidates WHERE account = ${$(1)} AND ${text}`, [
        account,
        ...parameters,
      ])
    ).map(decodeCandidate);
  return {
    campaignIds: async () =>
      (
        await rows<{ campaign_id: string }>(`SELECT campaign_id FROM campaigns WHERE account = ${$(1)} ORDER BY campaign_id`, [account])
      ).map((r) => r.campaign_id),
    campaign: async (campaignId) =>
      (
        await rows<CampaignRow>(
          `SELECT campaign_id, ${CAMPAIGN_COLUMNS.join(', ')} FROM campaigns WHERE account = ${$(1)} AND campaign_id = ${$(2)}`,
          [account, campaignId],
        )
      )[0],
    candidate: async (candidateId) => (await candidates(`candidate_id = ${$(2)}`, [candidateId]))[0],
    candidatesOf: (campaignId) => candidates(`campaign_id = ${$(2)}`, [campaignId]),
    async candidates(candidateIds) {
      const found: CandidateRow[] = [];
      for (let i = 0; i < candidateIds.length; i += IDS_PER_READ) {
        const chunk = candidateIds.slice(i, i + IDS_PER_READ);
        found.push(...(await candidates(`candidate_id IN (${placeholders(sql, chunk.length, 2)})`, chunk)));
      }
      return found;
    },
    responses: (candidateId) =>
      rows<InterviewResponse>(
        `SELECT question, answer, score, explanation FROM interview_responses WHERE account = ${$(1)} AND candidate_id = ${$(2)} ORDER BY position`,
        [account, candidateId],
      ),
    credits: async () =>
      (await rows<CreditsRow>(`SELECT ${CREDITS_COLUMNS.join(', ')} FROM credits WHERE account = ${$(1)}`, [account]))[0],
  };
}
