import { z } from 'zod';
import { CANDIDATE_STATUSES } from '../events/index.js';
import { CANDIDATE_SELECT, createRowReaders } from '../project/read.js';
import { decodeCandidate, type CandidateRow, type InterviewResponse } from '../store/tables.js';
import type { Store } from '../store/store.js';
import { QueryParameterError } from './errors.js';

export const CANDIDATE_SORTS = ['date_desc', 'date_asc', 'score_desc', 'score_asc'] as const;
export { CANDIDATE_STATUSES };

// The service's list parameters; numbers may come as query-string text.
const listParameters = z.object({
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(50),
  sort: z.enum(CANDIDATE_SORTS).default('date_desc'),
  status: z.enum(CANDIDATE_STATUSES).optional(),
  min_score: z.coerce.number().min(0).max(10).optional(),
});

export type CandidateListParameters = z.input<typeof listParameters>;

export interface CandidatePage {
  candidates: CandidateRow[];
  pagination: { total: number; page: number; per_page: number; total_pages: number };
}

// Date order uses interview_date, falling back to when the candidate was added (docs/projection.md 5).
const DATE = 'COALESCE(interview_date, added_at)';
const ORDER: Record<(typeof CANDIDATE_SORTS)[number], string> = {
  date_desc: `${DATE} DESC NULLS LAST, candidate_id`,
  date_asc: `${DATE} ASC NULLS LAST, candidate_id`,
  score_desc: `interview_score DESC NULLS LAST, ${DATE} DESC NULLS LAST, candidate_id`,
  score_asc: `interview_score ASC NULLS LAST, ${DATE} DESC NULLS LAST, candidate_id`,
};

export function prepareCandidateQueries(store: Store) {
  const rows = createRowReaders(store);
  return {
    /**
     * A campaign's candidates as the service lists them: `page` from 1, `per_page` 1–100
     * (default 50), `sort` (default `date_desc`), optional `status` and `min_score` filters.
     * Throws QueryParameterError naming the first invalid parameter.
     */
    async listCandidates(campaignId: string, parameters: CandidateListParameters = {}): Promise<CandidatePage> {
      const parsed = listParameters.safeParse(parameters);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new QueryParameterError(String(issue.path[0] ?? 'parameters'), issue.message);
      }
      const { page, per_page, sort, status, min_score } = parsed.data;
      const where = ['campaign_id = ?'];
      const values: unknown[] = [campaignId];
      if (status !== undefined) {
        where.push('status = ?');
        values.push(status);
      }
      if (min_score !== undefined) {
        where.push('interview_score >= ?');
        values.push(min_score);
      }
      const filter = where.join(' AND ');
      const [counted] = await store.select<{ total: number }>(`SELECT COUNT(*) AS total FROM candidates WHERE ${filter}`, values);
      const total = counted!.total;
      const found = await store.select(
        `SELECT ${CANDIDATE_SELECT} FROM candidates WHERE ${filter} ORDER BY ${ORDER[sort]} LIMIT ? OFFSET ?`,
        [...values, per_page, (page - 1) * per_page],
      );
      return {
        candidates: found.map(decodeCandidate),
        pagination: { total, page, per_page, total_pages: Math.ceil(total / per_page) },
      };
    },
    /** One candidate with the responses of its extended interview (empty when none). */
    async getCandidate(candidateId: string): Promise<(CandidateRow & { responses: InterviewResponse[] }) | undefined> {
      const candidate = await rows.candidate(candidateId);
      return candidate === undefined ? undefined : { ...candidate, responses: await rows.responses(candidateId) };
    },
  };
}
