import type { SqliteDatabase } from '../store/sqlite/database.js';
import {
  CAMPAIGN_COLUMNS,
  CANDIDATE_COLUMNS,
  CREDITS_COLUMNS,
  type CampaignRow,
  type CandidateRow,
  type CreditsRow,
  type InterviewResponse,
} from '../store/tables.js';

const CANDIDATE_SELECT = `candidate_id, ${CANDIDATE_COLUMNS.join(', ')}`;

/** Candidate rows as users read them from the API: 0/1 columns as booleans. */
export function decodeCandidate(row: Record<string, unknown>): CandidateRow {
  const flag = (v: unknown) => (v === null || v === undefined ? null : v === 1);
  return {
    ...(row as unknown as CandidateRow),
    is_sourced: row.is_sourced === 1,
    call_queued: flag(row.call_queued),
    sms_sent: flag(row.sms_sent),
  };
}

/** Reads single rows of the projected state by key. */
export function prepareRowReaders(db: SqliteDatabase) {
  const campaign = db.prepare(`SELECT campaign_id, ${CAMPAIGN_COLUMNS.join(', ')} FROM campaigns WHERE campaign_id = ?`);
  const candidate = db.prepare(`SELECT ${CANDIDATE_SELECT} FROM candidates WHERE candidate_id = ?`);
  const responses = db.prepare(
    'SELECT question, answer, score, explanation FROM interview_responses WHERE candidate_id = ? ORDER BY position',
  );
  const credits = db.prepare(`SELECT ${CREDITS_COLUMNS.join(', ')} FROM credits WHERE account = 1`);
  return {
    campaign: (id: string): CampaignRow | undefined => campaign.get(id) as CampaignRow | undefined,
    candidate(id: string): CandidateRow | undefined {
      const row = candidate.get(id) as Record<string, unknown> | undefined;
      return row === undefined ? undefined : decodeCandidate(row);
    },
    responses: (candidateId: string): InterviewResponse[] => responses.all(candidateId) as InterviewResponse[],
    credits: (): CreditsRow | undefined => credits.get() as CreditsRow | undefined,
  };
}

export type RowReaders = ReturnType<typeof prepareRowReaders>;
export { CANDIDATE_SELECT };
