import type { Store } from '../store/store.js';
import { CAMPAIGN_COLUMNS, type CampaignRow } from '../store/tables.js';

/** Mirrors the service's `GET /campaigns/{id}/status` `stats`. */
export interface CampaignStats {
  total_candidates: number;
  interviews_completed: number;
  /** Mean score of the completed interviews; null when there are none. */
  average_score: number | null;
}

export type CampaignWithStats = CampaignRow & { stats: CampaignStats };

const SELECT = `
  SELECT c.campaign_id, ${CAMPAIGN_COLUMNS.map((c) => `c.${c}`).join(', ')},
         (SELECT COUNT(*) FROM candidates k WHERE k.campaign_id = c.campaign_id) AS total_candidates,
         (SELECT COUNT(*) FROM candidates k WHERE k.campaign_id = c.campaign_id AND k.status = 'completed') AS interviews_completed,
         (SELECT AVG(k.interview_score) FROM candidates k
           WHERE k.campaign_id = c.campaign_id AND k.status = 'completed' AND k.interview_score IS NOT NULL) AS average_score
  FROM campaigns c`;

function withStats(row: Record<string, unknown>): CampaignWithStats {
  const { total_candidates, interviews_completed, average_score, ...campaign } = row;
  return {
    ...(campaign as unknown as CampaignRow),
    stats: {
      total_candidates: total_candidates as number,
      interviews_completed: interviews_completed as number,
      average_score: (average_score as number | null) ?? null,
    },
  };
}

export function prepareCampaignQueries(store: Store) {
  return {
    /** A campaign with its stats; undefined when no event named it. */
    async getCampaign(campaignId: string): Promise<CampaignWithStats | undefined> {
      const [row] = await store.select(`${SELECT} WHERE c.campaign_id = ?`, [campaignId]);
      return row === undefined ? undefined : withStats(row);
    },
    /** Every campaign with its stats, newest first (campaigns known only through candidates last). */
    async listCampaigns(): Promise<CampaignWithStats[]> {
      return (await store.select(`${SELECT} ORDER BY c.created_at IS NULL, c.created_at DESC, c.campaign_id`)).map(withStats);
    },
  };
}
