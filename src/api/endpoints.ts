/** Every path begins with this prefix, the API's version (docs/sandbox.md; docs/client.md, `baseUrl`). */
export const API_PREFIX = '/api/v1';

/**
 * The operations of the REST API, with their method and path under `API_PREFIX` (`:name` is a
 * path parameter). Those marked `documented: false` are the document's "referred to, not shown"
 * operations, in the shape the sandbox chose (docs/sandbox.md).
 */
export const ENDPOINTS = {
  createCampaign: { method: 'POST', path: '/campaigns/create', documented: true },
  listCampaigns: { method: 'GET', path: '/campaigns', documented: false },
  getCampaign: { method: 'GET', path: '/campaigns/:campaign_id', documented: false },
  modifyCampaign: { method: 'PATCH', path: '/campaigns/:campaign_id', documented: true },
  changeCampaignStatus: { method: 'PATCH', path: '/campaigns/:campaign_id/status', documented: true },
  getCampaignStatus: { method: 'GET', path: '/campaigns/:campaign_id/status', documented: true },
  addCandidates: { method: 'POST', path: '/campaigns/:campaign_id/candidates', documented: true },
  listCandidates: { method: 'GET', path: '/campaigns/:campaign_id/candidates', documented: true },
  getCandidate: { method: 'GET', path: '/campaigns/:campaign_id/candidates/:candidate_id', documented: false },
  sourceCandidates: { method: 'POST', path: '/campaigns/:campaign_id/source', documented: true },
  listVoices: { method: 'GET', path: '/voices', documented: true },
  getCredits: { method: 'GET', path: '/account/credits', documented: true },
} as const satisfies Record<EndpointName, { method: 'GET' | 'POST' | 'PATCH'; path: string; documented: boolean }>;

/** An operation of the REST API, by its client method's name (`ENDPOINTS` has exactly these). */
export type EndpointName =
  | 'createCampaign'
  | 'listCampaigns'
  | 'getCampaign'
  | 'modifyCampaign'
  | 'changeCampaignStatus'
  | 'getCampaignStatus'
  | 'addCandidates'
  | 'listCandidates'
  | 'getCandidate'
  | 'sourceCandidates'
  | 'listVoices'
  | 'getCredits';
