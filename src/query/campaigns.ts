import type { CampaignStatsRow } from '../store/ports/read-model.js';
import type { Store } from '../store/store.js';
import type { CampaignRow } from '../tables/rows.js';
import { QueryParameterError } from './errors.js';

/** Mirrors the service's `GET /campaigns/{id}/status` `stats`. */
export interface CampaignStats {
  /** Candidates in the campaign. */
  total_candidates: number;
  /** Candidates whose interview completed. */
  interviews_completed: number;
  /** Mean score of the completed interviews; null when there are none. */
  average_score: number | null;
}

/** A projected campaign and its stats. */
export type CampaignWithStats = CampaignRow & { stats: CampaignStats };

/** Which page of campaigns `listCampaignPage` returns. */
export interface CampaignPageParameters {
  /** The cursor: the campaigns after this one (its id) in the list's order. */
  after?: string;
  /** 1 to 500, default 50. */
  limit?: number;
}

/** One page of campaigns, newest first. */
export interface CampaignPage {
  /** The campaigns of this page. */
  campaigns: CampaignWithStats[];
  /** The `after` of the next page; null on the last one. */
  next: string | null;
}

/** How many campaigns `listCampaigns` reads at a time. */
const WHOLE_LIST_PAGE = 500;

function withStats(row: CampaignStatsRow): CampaignWithStats {
  const { total_candidates, interviews_completed, average_score, ...campaign } = row;
  return { ...campaign, stats: { total_candidates, interviews_completed, average_score: average_score ?? null } };
}

/** A page of campaigns, newest first; `after` pages on. An unknown `after` gives an empty page. */
async function campaignPage(store: Pick<Store, 'readModel'>, parameters: CampaignPageParameters): Promise<CampaignPage> {
  const limit = parameters.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new QueryParameterError('limit', 'an integer from 1 to 500');
  const after = parameters.after === '' ? undefined : parameters.after;
  // One row more than asked: whether there is a next page.
  const rows = await store.readModel.campaigns({ after, limit: limit + 1 });
  const campaigns = rows.slice(0, limit).map(withStats);
  return { campaigns, next: rows.length > limit ? campaigns[campaigns.length - 1]!.campaign_id : null };
}

export function prepareCampaignQueries(store: Pick<Store, 'readModel'>) {
  return {
    /** A campaign with its stats; undefined when no event named it. */
    async getCampaign(campaignId: string): Promise<CampaignWithStats | undefined> {
      const row = await store.readModel.campaign(campaignId);
      return row === undefined ? undefined : withStats(row);
    },
    /** A page of the campaigns with their stats, newest first (campaigns known only through candidates last, by id). */
    listCampaignPage: (parameters: CampaignPageParameters = {}) => campaignPage(store, parameters),
    /** Every campaign with its stats, in the same order: read a page at a time, but as long as the campaigns are many. */
    async listCampaigns(): Promise<CampaignWithStats[]> {
      const all: CampaignWithStats[] = [];
      for (let after: string | undefined; ;) {
        const page = await campaignPage(store, { after, limit: WHOLE_LIST_PAGE });
        all.push(...page.campaigns);
        if (page.next === null) return all;
        after = page.next;
      }
    },
  };
}
