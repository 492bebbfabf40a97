import {
  addCandidatesRequestSchema,
  API_PREFIX,
  CANDIDATE_REQUEST_RULES,
  changeStatusRequestSchema,
  check,
  CREATE_CAMPAIGN_RULES,
  createCampaignRequestSchema,
  ENDPOINTS,
  ERROR_CODES,
  isErrorCode,
  listCampaignsQuerySchema,
  listCandidatesQuerySchema,
  MODIFY_CAMPAIGN_RULES,
  modifyCampaignRequestSchema,
  sourceCandidatesRequestSchema,
  type AddCandidatesRequest,
  type AddCandidatesResponse,
  type CampaignRecord,
  type CampaignStatus,
  type CampaignStatusResponse,
  type CandidateDetails,
  type CandidateRecord,
  type ChangeStatusResponse,
  type CreateCampaignRequest,
  type CreateCampaignResponse,
  type CreditsResponse,
  type EndpointName,
  type ErrorCode,
  type ListCampaignsQuery,
  type ListCampaignsResponse,
  type ListCandidatesQuery,
  type ListCandidatesResponse,
  type ModifyCampaignRequest,
  type ModifyCampaignResponse,
  type SourceCandidatesRequest,
  type VoicesResponse,
} from '../api/index.js';
import type { z } from 'zod';
import { PrequalApiError, PrequalNetworkError, type RequestInfo } from './errors.js';
import { createThrottle, type ThrottleOptions } from './throttle.js';

export interface ClientOptions {
  /** The agency's key (`X-API-Key`), from its dashboard. */
  apiKey: string;
  /** The service's origin, e.g. `https://api.example.com` (the `/api/v1` prefix is added). */
  baseUrl: string;
  /** Retries of a request that failed with 429, a 5xx or a network error, where a retry is safe. Default 3. */
  retries?: number;
  /** First backoff of a 5xx or network retry (ms), doubled each time, with ±50 % jitter. Default 500. */
  retryBaseMs?: number;
  /** Longest wait for one answer (ms). Default 10000. */
  timeoutMs?: number;
  /** Requests per minute and per hour this client allows itself (default the service's 60 and 1,000). */
  throttle?: Omit<ThrottleOptions, 'sleep' | 'now'>;
  /** For tests: the fetch, clock and sleep to use. */
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

// A POST is retried only when repeating it cannot do twice what was asked: adding or sourcing
// candidates skips those already in the campaign (same phone or e-mail), so a retry after a lost
// answer adds nobody twice; creating a campaign has no such key, so it is retried only after a
// 429 (refused before any work). PATCHes set values, GETs read: both are retried.
const RETRY_AFTER_FAILURE: Record<EndpointName, boolean> = {
  createCampaign: false,
  listCampaigns: true,
  getCampaign: true,
  modifyCampaign: true,
  changeCampaignStatus: true,
  getCampaignStatus: true,
  addCandidates: true,
  listCandidates: true,
  getCandidate: true,
  sourceCandidates: true,
  listVoices: true,
  getCredits: true,
};

type Params = Record<string, string>;

/**
 * A typed client of the service's REST API, with its rules checked locally (a violation rejects
 * with the service's code before any request), retries and throttling.
 */
export function createClient(options: ClientOptions) {
  const retries = options.retries ?? 3;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const throttle = createThrottle({ ...options.throttle, sleep, ...(options.now && { now: options.now }) });
  const base = options.baseUrl.replace(/\/+$/, '') + API_PREFIX;

  function pathOf(name: EndpointName, params: Params): string {
    return ENDPOINTS[name].path.replace(/:([a-z_]+)/g, (_, key: string) => encodeURIComponent(params[key] ?? ''));
  }

  /** Throws what the service would answer when the input breaks a documented rule; no request is made. */
  function checked<S extends z.ZodType>(schema: S, input: unknown, rules: readonly ErrorCode[], request: RequestInfo): z.output<S> {
    const result = check(schema, input, rules);
    if (result.ok) return result.value;
    throw PrequalApiError.fromViolation(result.violation, ERROR_CODES[result.violation.code].status, request);
  }

  async function call<T>(name: EndpointName, params: Params, body?: unknown, query?: Record<string, unknown>): Promise<T> {
    const { method } = ENDPOINTS[name];
    const path = pathOf(name, params);
    const request: RequestInfo = { method, path };
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(key, String(value));
    const url = `${base}${path}${search.size > 0 ? `?${search}` : ''}`;
    for (let attempt = 0; ; attempt++) {
      await throttle.acquire();
      let response: Response;
      try {
        response = await doFetch(url, {
          method,
          headers: { 'X-API-Key': options.apiKey, Accept: 'application/json', ...(body !== undefined && { 'Content-Type': 'application/json' }) },
          ...(body !== undefined && { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        if (attempt < retries && RETRY_AFTER_FAILURE[name]) {
          await sleep(backoff(attempt));
          continue;
        }
        throw new PrequalNetworkError(`${method} ${path}: ${(error as Error).message}`, request, { cause: error });
      }
      const text = await response.text();
      const json = parse(text);
      if (response.ok) return json as T;
      const envelope = (json as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)?.error;
      const code = typeof envelope?.code === 'string' ? envelope.code : `HTTP_${response.status}`;
      const details = typeof envelope?.details === 'object' && envelope.details !== null ? (envelope.details as Record<string, unknown>) : undefined;
      const message = typeof envelope?.message === 'string' ? envelope.message : isErrorCode(code) ? ERROR_CODES[code].message : response.statusText;
      if (attempt < retries) {
        if (response.status === 429) {
          // Refused before any work: safe to repeat, once the service says so.
          const after = Number(details?.retry_after ?? response.headers.get('retry-after') ?? 1);
          await sleep(Math.max(0, Number.isFinite(after) ? after : 1) * 1000);
          continue;
        }
        if (response.status >= 500 && RETRY_AFTER_FAILURE[name]) {
          await sleep(backoff(attempt));
          continue;
        }
      }
      throw new PrequalApiError(response.status, code, message, details, request);
    }
  }

  function backoff(attempt: number): number {
    return retryBaseMs * 2 ** attempt * (0.5 + Math.random());
  }

  return {
    /** `POST /campaigns/create`. Checked locally: required fields, questions, weights, thresholds, messages… */
    async createCampaign(body: CreateCampaignRequest): Promise<CreateCampaignResponse> {
      const request = { method: 'POST', path: pathOf('createCampaign', {}) };
      return await call('createCampaign', {}, checked(createCampaignRequestSchema, body, CREATE_CAMPAIGN_RULES, request));
    },
    /** `PATCH /campaigns/{id}`; the rules that need the campaign's current questions are the service's to check. */
    async modifyCampaign(campaignId: string, body: ModifyCampaignRequest): Promise<ModifyCampaignResponse> {
      const request = { method: 'PATCH', path: pathOf('modifyCampaign', { campaign_id: campaignId }) };
      checked(modifyCampaignRequestSchema(), body, MODIFY_CAMPAIGN_RULES, request);
      return await call('modifyCampaign', { campaign_id: campaignId }, body);
    },
    async changeCampaignStatus(campaignId: string, status: CampaignStatus): Promise<ChangeStatusResponse> {
      const request = { method: 'PATCH', path: pathOf('changeCampaignStatus', { campaign_id: campaignId }) };
      return await call('changeCampaignStatus', { campaign_id: campaignId }, checked(changeStatusRequestSchema, { status }, [], request));
    },
    getCampaignStatus: (campaignId: string): Promise<CampaignStatusResponse> => call('getCampaignStatus', { campaign_id: campaignId }),
    getCampaign: (campaignId: string): Promise<CampaignRecord> => call('getCampaign', { campaign_id: campaignId }),
    async listCampaigns(query: ListCampaignsQuery = {}): Promise<ListCampaignsResponse> {
      const request = { method: 'GET', path: pathOf('listCampaigns', {}) };
      return await call('listCampaigns', {}, undefined, checked(listCampaignsQuerySchema, query, [], request));
    },
    /**
     * `POST /campaigns/{id}/candidates`: 1 to 100 candidates, checked locally. Phone numbers and
     * e-mails are the service's to judge per candidate: it answers 201 with the invalid ones in `errors`.
     */
    async addCandidates(campaignId: string, body: AddCandidatesRequest): Promise<AddCandidatesResponse> {
      const request = { method: 'POST', path: pathOf('addCandidates', { campaign_id: campaignId }) };
      return await call('addCandidates', { campaign_id: campaignId }, checked(addCandidatesRequestSchema, body, CANDIDATE_REQUEST_RULES, request));
    },
    async sourceCandidates(campaignId: string, body: SourceCandidatesRequest): Promise<AddCandidatesResponse> {
      const request = { method: 'POST', path: pathOf('sourceCandidates', { campaign_id: campaignId }) };
      return await call('sourceCandidates', { campaign_id: campaignId }, checked(sourceCandidatesRequestSchema, body, CANDIDATE_REQUEST_RULES, request));
    },
    async listCandidates(campaignId: string, query: ListCandidatesQuery = {}): Promise<ListCandidatesResponse> {
      const request = { method: 'GET', path: pathOf('listCandidates', { campaign_id: campaignId }) };
      return await call('listCandidates', { campaign_id: campaignId }, undefined, checked(listCandidatesQuerySchema, query, [], request));
    },
    /** Every candidate of a campaign, page after page, with the list's sort and filters. */
    async *candidates(campaignId: string, query: Omit<ListCandidatesQuery, 'page'> = {}): AsyncGenerator<CandidateRecord> {
      for (let page = 1; ; page++) {
        const { candidates, pagination } = await this.listCandidates(campaignId, { per_page: 100, ...query, page });
        yield* candidates;
        if (page >= pagination.total_pages || candidates.length === 0) return;
      }
    },
    getCandidate: (campaignId: string, candidateId: string): Promise<CandidateDetails> =>
      call('getCandidate', { campaign_id: campaignId, candidate_id: candidateId }),
    listVoices: (): Promise<VoicesResponse> => call('listVoices', {}),
    getCredits: (): Promise<CreditsResponse> => call('getCredits', {}),
  };
}

export type Client = ReturnType<typeof createClient>;

function parse(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
