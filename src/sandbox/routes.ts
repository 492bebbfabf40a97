// The route table: each documented operation (src/api ENDPOINTS) and the sandbox's own two.
import { API_PREFIX, ENDPOINTS, type EndpointName } from '../api/index.js';
import { changeCampaignStatus, createCampaign, getCampaign, getCampaignStatus, listCampaigns, modifyCampaign } from './campaigns.js';
import { addCandidates, getCandidate, listCandidates, sourceCandidates } from './candidates.js';
import type { ApiRequest, SandboxContext } from './context.js';
import { creditsResponse, rollOver } from './credits.js';
import { ok, type Reply } from './errors.js';
import { voicesResponse } from './voices.js';

type ApiRoute = (request: ApiRequest, context: SandboxContext) => Reply;

const API_ROUTES: Record<EndpointName, ApiRoute> = {
  createCampaign,
  listCampaigns,
  getCampaign,
  modifyCampaign,
  changeCampaignStatus,
  getCampaignStatus,
  addCandidates,
  listCandidates,
  getCandidate,
  sourceCandidates,
  listVoices: (request) => ok(voicesResponse(request.agency)),
  getCredits: (request, context) => {
    rollOver(request.agency.credits, context.clock.now());
    return ok(creditsResponse(request.agency.credits));
  },
};

const COMPILED = Object.entries(ENDPOINTS).map(([name, endpoint]) => {
  const names: string[] = [];
  const pattern = endpoint.path.replace(/:([a-z_]+)/g, (_, param: string) => {
    names.push(param);
    return '([^/]+)';
  });
  return { name: name as EndpointName, method: endpoint.method, regex: new RegExp(`^${API_PREFIX}${pattern}/?$`), names };
});

export type RouteMatch = { found: true; route: ApiRoute; params: Record<string, string>; name: EndpointName } | { found: false };

/** The operation a method and path name, with its path parameters decoded. */
export function matchApiRoute(method: string, path: string): RouteMatch {
  for (const compiled of COMPILED) {
    if (compiled.method !== method) continue;
    const match = compiled.regex.exec(path);
    if (match === null) continue;
    const params: Record<string, string> = {};
    try {
      compiled.names.forEach((param, i) => (params[param] = decodeURIComponent(match[i + 1]!)));
    } catch {
      return { found: false };
    }
    return { found: true, route: API_ROUTES[compiled.name], params, name: compiled.name };
  }
  return { found: false };
}
