import type { Store } from '../store/store.js';
import {
  CAMPAIGN_COLUMNS,
  CANDIDATE_COLUMNS,
  CREDITS_COLUMNS,
  decodeCandidate,
  type CampaignRow,
  type CandidateRow,
  type CreditsRow,
  type InterviewResponse,
} from '../store/tables.js';

export const CANDIDATE_SELECT = `candidate_id, ${CANDIDATE_COLUMNS.join(', ')}`;

/** Reads single rows of the projected state by key, on either engine. */
export function createRowReaders(store: Store) {
  return {
    async campaign(id: string): Promise<CampaignRow | undefined> {
      const [row] = await store.select<CampaignRow>(
        `SELECT campaign_id, ${CAMPAIGN_COLUMNS.join(', ')} FROM campaigns WHERE campaign_id = ?`,
        [id],
      );
      return row;
    },
    async candidate(id: string): Promise<CandidateRow | undefined> {
      const [row] = await store.select(`SELECT ${CANDIDATE_SELECT} FROM candidates WHERE candidate_id = ?`, [id]);
      return row === undefined ? undefined : decodeCandidate(row);
    },
    responses: (candidateId: string): Promise<InterviewResponse[]> =>
      store.select<InterviewResponse>(
        'SELECT question, answer, score, explanation FROM interview_responses WHERE candidate_id = ? ORDER BY position',
        [candidateId],
      ),
    async credits(): Promise<CreditsRow | undefined> {
      const [row] = await store.select<CreditsRow>(`SELECT ${CREDITS_COLUMNS.join(', ')} FROM credits WHERE account = 1`);
      return row;
    },
  };
}

export type RowReaders = ReturnType<typeof createRowReaders>;
