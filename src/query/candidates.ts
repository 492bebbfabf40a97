import { z } from 'zod';
import { CANDIDATE_STATUSES } from '../events/index.js';
import { createRowReaders } from '../project/read.js';
import type { CandidateSort } from '../store/ports/read-model.js';
import type { CandidateRow, InterviewResponse } from '../tables/rows.js';
import type { Store } from '../store/store.js';
import { QueryParameterError } from './errors.js';

export const CANDIDATE_SORTS = ['date_desc', 'date_asc', 'score_desc', 'score_asc'] as const satisfies readonly CandidateSort[];
export { CANDIDATE_STATUSES };

// The service's list parameters; numbers may come as query-string text.
const listParameters = z.object({
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(50),
  sort: z.enum(CANDIDATE_SORTS).default('date_desc'),
  status: z.enum(CANDIDATE_STATUSES).optional(),
  min_score: z.coerce.number().min(0).max(10).optional(),
});

/** Which candidates of a campaign `listCandidates` returns, as the service's list takes them; numbers may be query-string text. */
export interface CandidateListParameters {
  /** The page, from 1. Default 1. */
  page?: number | string;
  /** Candidates a page, 1 to 100. Default 50. */
  per_page?: number | string;
  /** The order. Default `date_desc` (newest first). */
  sort?: 'date_desc' | 'date_asc' | 'score_desc' | 'score_asc';
  /** Only candidates with this status. */
  status?: 'pending' | 'completed' | 'voicemail' | 'incomplete';
  /** Only candidates whose interview scored at least this, 0 to 10. */
  min_score?: number | string;
}

/** One page of a campaign's candidates, as the service lists them. */
export interface CandidatePage {
  /** The candidates of this page. */
  candidates: CandidateRow[];
  /** Where the page is: `total` candidates, `page` of `total_pages`, `per_page` each. */
  pagination: { total: number; page: number; per_page: number; total_pages: number };
}

export function prepareCandidateQueries(store: Pick<Store, 'readModel' | 'projected'>) {
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
      const { total, candidates } = await store.readModel.listCandidates({
        campaignId,
        status,
        minScore: min_score,
        sort,
        limit: per_page,
        offset: (page - 1) * per_page,
      });
      return {
        candidates,
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
