import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { createQueries, QueryParameterError, type Queries } from '../../src/query/index.js';
import { replay } from '../../src/replay/index.js';

const SCENARIO = join(import.meta.dirname, '../../fixtures/scenarios/campaign-lifecycle.shuffled.ndjson');
const RK4 = 'cmp_Rk4vN8qWz2';
const BT9 = 'cmp_bT9mXe3Lh6';

describe('queries on the projected lifecycle scenario', () => {
  let query: Queries;
  beforeAll(async () => {
    const db = new Database(':memory:');
    await replay(SCENARIO, { database: db });
    query = createQueries(db);
  });

  it('give a campaign with the service\'s stats', () => {
    expect(query.getCampaign(RK4)).toMatchObject({
      campaign_id: RK4,
      job_title: 'Préparateur de commandes H/F',
      status: 'completed',
      stats: { total_candidates: 8, interviews_completed: 4, average_score: 7.375 },
    });
    expect(query.getCampaign(BT9)?.stats).toEqual({ total_candidates: 6, interviews_completed: 3, average_score: 6.5 });
    expect(query.getCampaign('cmp_unknown')).toBeUndefined();
    expect(query.listCampaigns().map((c) => c.campaign_id)).toEqual([BT9, RK4]); // newest first
  });

  it('list candidates by score, best first, with nulls last and pagination', () => {
    const page = query.listCandidates(RK4, { sort: 'score_desc', per_page: 3 });
    expect(page.candidates.map((c) => c.interview_score)).toEqual([8.5, 7.5, 7]);
    expect(page.pagination).toEqual({ total: 8, page: 1, per_page: 3, total_pages: 3 });
    const last = query.listCandidates(RK4, { sort: 'score_desc', per_page: 3, page: 3 });
    expect(last.candidates.map((c) => c.interview_score)).toEqual([null, null]);
    const ascending = query.listCandidates(RK4, { sort: 'score_asc' }).candidates.map((c) => c.interview_score);
    expect(ascending.slice(0, 4)).toEqual([6.5, 7, 7.5, 8.5]);
    expect(ascending.slice(4)).toEqual([null, null, null, null]);
  });

  it('filter by status and minimum score, and sort by date (interview, else added)', () => {
    expect(query.listCandidates(RK4, { status: 'incomplete' }).candidates.map((c) => c.first_name).sort()).toEqual(['Aurélien', 'Benoît', 'Gaëlle']);
    expect(query.listCandidates(RK4, { min_score: 7.5 }).candidates.map((c) => c.first_name).sort()).toEqual(['Maëlys', 'Éloïse']);
    expect(query.listCandidates(BT9, { min_score: '6' }).pagination.total).toBe(2);
    const byDate = query.listCandidates(BT9, { status: 'completed', sort: 'date_desc' }).candidates.map((c) => c.interview_date);
    expect(byDate).toEqual([...byDate].sort().reverse());
    const asc = query.listCandidates(BT9, { sort: 'date_asc' }).candidates;
    expect(asc).toHaveLength(6);
    const dates = asc.map((c) => c.interview_date ?? (c as { added_at?: string }).added_at);
    expect(dates).toEqual([...dates].sort());
  });

  it('return one candidate with its interview responses in order, and booleans as booleans', () => {
    const eloise = query.listCandidates(RK4, { sort: 'score_desc', per_page: 1 }).candidates[0]!;
    const candidate = query.getCandidate(eloise.candidate_id)!;
    expect(candidate.first_name).toBe('Éloïse');
    expect(candidate.responses).toHaveLength(5);
    expect(candidate.responses[0]).toEqual(expect.objectContaining({ question: expect.any(String), score: expect.any(Number) }));
    expect(typeof candidate.is_sourced).toBe('boolean');
    expect(query.getCandidate('nobody')).toBeUndefined();
  });

  it('give the credits row', () => {
    expect(query.getCredits()).toEqual({ credits_remaining: 0, low_threshold: 10, last_campaign_id: BT9 });
  });

  it('refuse invalid parameters with a typed error that names the parameter', () => {
    const cases: Array<[object, string]> = [
      [{ page: 0 }, 'page'],
      [{ per_page: 101 }, 'per_page'],
      [{ per_page: 'many' }, 'per_page'],
      [{ sort: 'name' }, 'sort'],
      [{ status: 'hired' }, 'status'],
      [{ min_score: 11 }, 'min_score'],
    ];
    for (const [parameters, name] of cases) {
      try {
        query.listCandidates(RK4, parameters as never);
        expect.fail(`accepted ${JSON.stringify(parameters)}`);
      } catch (error) {
        expect(error).toBeInstanceOf(QueryParameterError);
        expect((error as QueryParameterError).parameter).toBe(name);
        expect((error as QueryParameterError).toJSON().error.code).toBe('VALIDATION_ERROR');
      }
    }
  });
});
