import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueries, QueryParameterError, type Queries } from '../../src/query/index.js';
import { replayInto } from '../../src/replay/index.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { ENGINES } from '../support/engines.js';

const SCENARIO = join(import.meta.dirname, '../../fixtures/scenarios/campaign-lifecycle.shuffled.ndjson');
const EXPECTED = join(import.meta.dirname, '../../fixtures/scenarios/campaign-lifecycle.expected.json');
const RK4 = 'cmp_Rk4vN8qWz2';
const BT9 = 'cmp_bT9mXe3Lh6';

describe.each(ENGINES)('queries on the projected lifecycle scenario ($name)', (engine) => {
  let query: Queries;
  let store: Store;
  let cleanup: () => void;
  beforeAll(async () => {
    const fresh = await engine.fresh();
    cleanup = fresh.cleanup;
    store = await openStore(fresh.database);
    await replayInto({ store }, SCENARIO);
    query = createQueries(store);
  });
  afterAll(async () => {
    await store.close();
    cleanup();
  });

  it("give a campaign with the service's stats", async () => {
    expect(await query.getCampaign(RK4)).toMatchObject({
      campaign_id: RK4,
      job_title: 'Préparateur de commandes H/F',
      status: 'completed',
      stats: { total_candidates: 8, interviews_completed: 4, average_score: 7.375 },
    });
    expect((await query.getCampaign(BT9))?.stats).toEqual({ total_candidates: 6, interviews_completed: 3, average_score: 6.5 });
    expect(await query.getCampaign('cmp_unknown')).toBeUndefined();
    expect((await query.listCampaigns()).map((c) => c.campaign_id)).toEqual([BT9, RK4]); // newest first
  });

  it('list candidates by score, best first, with nulls last and pagination', async () => {
    const page = await query.listCandidates(RK4, { sort: 'score_desc', per_page: 3 });
    expect(page.candidates.map((c) => c.interview_score)).toEqual([8.5, 7.5, 7]);
    expect(page.pagination).toEqual({ total: 8, page: 1, per_page: 3, total_pages: 3 });
    const last = await query.listCandidates(RK4, { sort: 'score_desc', per_page: 3, page: 3 });
    expect(last.candidates.map((c) => c.interview_score)).toEqual([null, null]);
    const ascending = (await query.listCandidates(RK4, { sort: 'score_asc' })).candidates.map((c) => c.interview_score);
    expect(ascending.slice(0, 4)).toEqual([6.5, 7, 7.5, 8.5]);
    expect(ascending.slice(4)).toEqual([null, null, null, null]);
  });

  it('filter by status and minimum score, and sort by date (interview, else added)', async () => {
    expect((await query.listCandidates(RK4, { status: 'incomplete' })).candidates.map((c) => c.first_name).sort()).toEqual([
      'Aurélien',
      'Benoît',
      'Gaëlle',
    ]);
    expect((await query.listCandidates(RK4, { min_score: 7.5 })).candidates.map((c) => c.first_name).sort()).toEqual(['Maëlys', 'Éloïse']);
    expect((await query.listCandidates(BT9, { min_score: '6' })).pagination.total).toBe(2);
    const byDate = (await query.listCandidates(BT9, { status: 'completed', sort: 'date_desc' })).candidates.map((c) => c.interview_date);
    expect(byDate).toEqual([...byDate].sort().reverse());
    const asc = (await query.listCandidates(BT9, { sort: 'date_asc' })).candidates;
    expect(asc).toHaveLength(6);
    const dates = asc.map((c) => c.interview_date ?? (c as { added_at?: string }).added_at);
    expect(dates).toEqual([...dates].sort());
  });

  it('return one candidate with its interview responses in order, and booleans as booleans', async () => {
    const eloise = (await query.listCandidates(RK4, { sort: 'score_desc', per_page: 1 })).candidates[0]!;
    const candidate = (await query.getCandidate(eloise.candidate_id))!;
    expect(candidate.first_name).toBe('Éloïse');
    expect(candidate.responses).toHaveLength(5);
    expect(candidate.responses[0]).toEqual(expect.objectContaining({ question: expect.any(String), score: expect.any(Number) }));
    expect(typeof candidate.is_sourced).toBe('boolean');
    expect(await query.getCandidate('nobody')).toBeUndefined();
  });

  it('return what the shipped expected.json says, value for value (booleans as true/false), so the fixture cannot drift', async () => {
    type Row = Record<string, unknown>;
    const expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as {
      campaigns: Row[];
      candidates: Row[];
      interview_responses: Row[];
      credits: Row;
    };
    // The fixture's columns of a row the queries return (they return more).
    const like = (row: object, model: Row) => Object.fromEntries(Object.keys(model).map((key) => [key, (row as Row)[key]]));
    const byId = (key: string) => (a: object, b: object) => (String((a as Row)[key]) < String((b as Row)[key]) ? -1 : 1);
    const campaigns = (await query.listCampaigns()).sort(byId('campaign_id'));
    const candidates = (
      await Promise.all(campaigns.map(async (c) => (await query.listCandidates(c.campaign_id, { per_page: 100 })).candidates))
    )
      .flat()
      .sort(byId('candidate_id'));
    const responses = (
      await Promise.all(
        candidates.map(async (c) =>
          ((await query.getCandidate(c.candidate_id))?.responses ?? []).map((r, position) => ({
            candidate_id: c.candidate_id,
            position,
            ...r,
          })),
        ),
      )
    ).flat();
    expect({
      campaigns: campaigns.map((c) => like(c, expected.campaigns[0]!)),
      candidates: candidates.map((c) => like(c, expected.candidates[0]!)),
      interview_responses: responses,
      credits: await query.getCredits(),
    }).toEqual(expected);
  });

  it('give the credits row', async () => {
    expect(await query.getCredits()).toEqual({ credits_remaining: 0, low_threshold: 10, last_campaign_id: BT9 });
  });

  it('refuse invalid parameters with a typed error that names the parameter', async () => {
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
        await query.listCandidates(RK4, parameters);
        expect.fail(`accepted ${JSON.stringify(parameters)}`);
      } catch (error) {
        expect(error).toBeInstanceOf(QueryParameterError);
        expect((error as QueryParameterError).parameter).toBe(name);
        expect((error as QueryParameterError).toJSON().error.code).toBe('VALIDATION_ERROR');
      }
    }
  });
});
