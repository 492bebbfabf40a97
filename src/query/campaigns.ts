import type { CampaignStatsRow } from '../store/ports/read-model.js';
import type { Store } from '../store/store.js';
import type { CampaignRow } from '../store/tables.js';

/** Mirrors the service's `GET /campaigns/{id}/status` `stats`. */
export interface CampaignStats {
  total_candidates: number;
  interviews_completed: number;
  /** Mean score of the completed interviews; null when there are none. */
  average_score: number | null;
}

export type CampaignWithStats = CampaignRow & { stats: CampaignStats };

function withStats(row: CampaignStatsRow): CampaignWithStats {
  const { total_candidates, interviews_completed, average_score, ...campaign } = row;
  return { ...campaign, stats: { total_candidates, interviews_completed, average_score: average_score ?? null } };
}

export function prepareCampaignQueries(store: Store) {
  return {
    /** A campaign with its stats; undefined when no event named it. */
    async getCampaign(campaignId: string): Promise<CampaignWithStats | undefined> {
      const row = await store.readModel.campaign(campaignId);
      return row === undefined ? undefined : withStats(row);
    },
    /** Every campaign with its stats, newest first (campaigns known only through candidates last). */
    async listCampaigns(): Promise<CampaignWithStats[]> {
      return (await store.readModel.campaigns()).map(withStats);
    },
  };
}
