// createClient: every operation of service-api.md, typed by the schemas of src/api, each
// request checked against the documented rules before it is sent.
import {
  addCandidatesRequestSchema,
  addCandidatesResponseSchema,
  CANDIDATE_REQUEST_RULES,
  campaignRecordSchema,
  campaignStatusResponseSchema,
  candidateDetailsSchema,
  changeStatusRequestSchema,
  changeStatusResponseSchema,
  check,
  CREATE_CAMPAIGN_RULES,
  createCampaignRequestSchema,
  createCampaignResponseSchema,
  creditsResponseSchema,
  ENDPOINTS,
  isApiKeyFormat,
  listCampaignsQuerySchema,
  listCampaignsResponseSchema,
  listCandidatesQuerySchema,
  listCandidatesResponseSchema,
  MODIFY_CAMPAIGN_RULES,
  modifyCampaignRequestSchema,
  modifyCampaignResponseSchema,
  readSubmittedCandidate,
  sourceCandidatesRequestSchema,
  voicesResponseSchema,
  API_KEY_HEADER,
  ERROR_CODES,
  type AddCandidatesRequest,
  type CallModeResponse,
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
  type InvitationResponse,
  type ListCampaignsQuery,
  type ListCampaignsResponse,
  type ListCandidatesQuery,
  type ListCandidatesResponse,
  type ModifyCampaignRequest,
  type ModifyCampaignResponse,
  type SourceCandidatesRequest,
  type Violation,
  type VoicesResponse,
} from '../api/index.js';
import type { z } from 'zod';
import { DEFAULT_MAX_RESPONSE_BYTES } from './body.js';
import { describeRequest, PrequalApiError } from './errors.js';
import { serviceUrlProblem } from './origin.js';
import { walkPages } from './pagination.js';
import { RETRY_DEFAULTS, type RetryOptions } from './retry.js';
import { createThrottle, systemClock, type Clock, type Throttle, type ThrottleOptions } from './throttle.js';
import { createTransport, type Call } from './transport.js';

export interface ClientOptions {
  /** The agency's key, sent as `X-API-Key`. */
  apiKey: string;
  /**
   * The service's address (`{base_url}`); `/api/v1` is added unless it already ends with it.
   * https, or http on this machine (localhost, 127.0.0.0/8, ::1) unless `allowInsecureHttp`.
   */
  baseUrl: string;
  /** Accept a plain http `baseUrl` on another host (default false): the key then crosses the network readable. */
  allowInsecureHttp?: boolean;
  /** An answer's body is read up to this many bytes (default 8 MB); a longer one is a `PrequalResponseError`. */
  maxResponseBytes?: number;
  /** Retries of 429, 5xx and network failures (see README, "Client"). */
  retry?: RetryOptions;
  /**
   * The per-key limits the client spaces its requests by (default 60 a minute, 1,000 an hour);
   * a `Throttle` from `createThrottle` to share one between clients of the same key; `false` for none.
   */
  throttle?: Omit<ThrottleOptions, 'clock'> | Throttle | false;
  /** Each attempt's time limit (default 30 s). */
  timeoutMs?: number;
  /** Check each success body against its schema (default true); a mismatch throws `PrequalResponseError`. */
  validateResponses?: boolean;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Default: the system clock. Tests pass a virtual one. */
  clock?: Clock;
  /** The jitter's source, from 0 to 1 (default `Math.random`). */
  random?: () => number;
}

/** A candidate list's filters and order, without the page (the iterator walks them). */
export type CandidateWalk = Omit<ListCandidatesQuery, 'page'>;
export type CampaignWalk = Omit<ListCampaignsQuery, 'page'>;

const isThrottle = (value: unknown): value is Throttle => typeof (value as Throttle | undefined)?.acquire === 'function';

export function createClient(options: ClientOptions) {
  const problem = serviceUrlProblem(typeof options?.baseUrl === 'string' ? options.baseUrl : '', options?.allowInsecureHttp === true, 'allowInsecureHttp: true');
  if (problem !== undefined) throw new TypeError(`createClient: baseUrl ${problem}`);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0)) throw new TypeError(`createClient: maxResponseBytes must be a whole number of bytes above 0, got ${String(maxResponseBytes)}`);
  const clock = options.clock ?? systemClock;
  const throttle = options.throttle === false ? undefined : isThrottle(options.throttle) ? options.throttle : createThrottle({ ...options.throttle, clock });
  const transport = createTransport({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    fetch: options.fetch ?? globalThis.fetch,
    throttle,
    retry: { ...RETRY_DEFAULTS, ...options.retry },
    timeoutMs: options.timeoutMs ?? 30_000,
    maxResponseBytes,
    validateResponses: options.validateResponses ?? true,
    clock,
    random: options.random ?? Math.random,
    userAgent: 'prequal-hooks-client',
  });

  /** Throws the error the service would answer, without sending, when `violation` is set. */
  function refuse(endpoint: EndpointName, violation: Violation, params?: Record<string, string>, body?: unknown, query?: Record<string, string | number | undefined>): never {
    const request = describeRequest(endpoint, ENDPOINTS[endpoint].method, transport.urlOf(endpoint, params, query), body);
    throw PrequalApiError.fromViolation(violation, request);
  }

  /** The checks every request passes first: the key (the service's 401s) and the path parameters. */
  function precheck(endpoint: EndpointName, params: Record<string, string> = {}): void {
    const key = options.apiKey;
    const header = { header: API_KEY_HEADER };
    if (key === undefined || key === null || key === '') refuse(endpoint, { code: 'MISSING_API_KEY', message: ERROR_CODES.MISSING_API_KEY.message, details: header }, params);
    if (!isApiKeyFormat(key)) refuse(endpoint, { code: 'INVALID_API_KEY_FORMAT', message: ERROR_CODES.INVALID_API_KEY_FORMAT.message, details: header }, params);
    for (const [name, value] of Object.entries(params)) {
      if (typeof value !== 'string' || value === '') {
        refuse(endpoint, { code: 'VALIDATION_ERROR', message: ERROR_CODES.VALIDATION_ERROR.message, details: { [name]: 'must be a non-empty string' } }, params);
      }
    }
  }

  /** Checks `input` against `schema` with the rule priority of the service; returns the parsed value. */
  function checked<S extends z.ZodType>(endpoint: EndpointName, schema: S, input: unknown, priority: readonly ErrorCode[], params?: Record<string, string>): z.output<S> {
    const result = check(schema, input, priority);
    if (!result.ok) refuse(endpoint, result.violation, params, input);
    return result.value;
  }

  /**
   * Each candidate read as the service reads it for its contact mode. The service reports a bad
   * candidate in `errors` and adds the others; the client refuses the whole request with that
   * candidate's code and index instead, so that no bad candidate is sent unnoticed.
   */
  function checkCandidates(endpoint: EndpointName, params: Record<string, string>, body: { candidates: unknown[]; contact_mode: 'call' | 'sms' | 'email' }, input: unknown): void {
    body.candidates.forEach((candidate, index) => {
      const reading = readSubmittedCandidate(candidate, body.contact_mode);
      if (!reading.ok) {
        // The phone itself is left out: errors get logged, and a phone is PII.
        refuse(endpoint, { code: reading.code, message: ERROR_CODES[reading.code].message, details: { index, error: reading.error.replace(/"[^"]*"/g, '…') } }, params, input);
      }
    });
  }

  const send = <S extends z.ZodType>(call: Call<S>) => transport.send(call);

  // Every method is async: a broken rule rejects the promise like an error answer would, never throws synchronously.
  const client = {
    /** `POST /campaigns/create`. Not retried after a 5xx or a lost answer (it could create two). */
    async createCampaign(body: CreateCampaignRequest): Promise<CreateCampaignResponse> {
      precheck('createCampaign');
      checked('createCampaign', createCampaignRequestSchema, body, CREATE_CAMPAIGN_RULES);
      return send({ endpoint: 'createCampaign', body, response: createCampaignResponseSchema });
    },

    /** `PATCH /campaigns/{campaign_id}`: only the fields given change. */
    async modifyCampaign(campaignId: string, body: ModifyCampaignRequest): Promise<ModifyCampaignResponse> {
      const params = { campaign_id: campaignId };
      precheck('modifyCampaign', params);
      checked('modifyCampaign', modifyCampaignRequestSchema(), body, MODIFY_CAMPAIGN_RULES, params);
      return send({ endpoint: 'modifyCampaign', params, body, response: modifyCampaignResponseSchema });
    },

    /** `PATCH /campaigns/{campaign_id}/status`. */
    async changeCampaignStatus(campaignId: string, status: CampaignStatus): Promise<ChangeStatusResponse> {
      const params = { campaign_id: campaignId };
      precheck('changeCampaignStatus', params);
      const body = { status };
      checked('changeCampaignStatus', changeStatusRequestSchema, body, [], params);
      return send({ endpoint: 'changeCampaignStatus', params, body, response: changeStatusResponseSchema });
    },

    /** `GET /campaigns/{campaign_id}/status`: the status and `stats`. */
    async getCampaignStatus(campaignId: string): Promise<CampaignStatusResponse> {
      const params = { campaign_id: campaignId };
      precheck('getCampaignStatus', params);
      return send({ endpoint: 'getCampaignStatus', params, response: campaignStatusResponseSchema });
    },

    /** `GET /campaigns/{campaign_id}`: every field (not shown in the document: the sandbox's shape). */
    async getCampaign(campaignId: string): Promise<CampaignRecord> {
      const params = { campaign_id: campaignId };
      precheck('getCampaign', params);
      return send({ endpoint: 'getCampaign', params, response: campaignRecordSchema });
    },

    /** `GET /campaigns`: one page (not shown in the document: the sandbox's shape). */
    async listCampaigns(query: ListCampaignsQuery = {}): Promise<ListCampaignsResponse> {
      precheck('listCampaigns');
      checked('listCampaigns', listCampaignsQuerySchema, query, []);
      return send({ endpoint: 'listCampaigns', query: query as Record<string, string | number | undefined>, response: listCampaignsResponseSchema });
    },

    /** `POST /campaigns/{campaign_id}/candidates` (1 to 100; `contact_mode` default `call`). */
    async addCandidates(campaignId: string, body: AddCandidatesRequest): Promise<CallModeResponse | InvitationResponse> {
      const params = { campaign_id: campaignId };
      precheck('addCandidates', params);
      const value = checked('addCandidates', addCandidatesRequestSchema, body, CANDIDATE_REQUEST_RULES, params);
      checkCandidates('addCandidates', params, value, body);
      return send({ endpoint: 'addCandidates', params, body, response: addCandidatesResponseSchema });
    },

    /** `POST /campaigns/{campaign_id}/source`: sourcing by SMS (1 to 100). */
    async sourceCandidates(campaignId: string, body: SourceCandidatesRequest): Promise<InvitationResponse> {
      const params = { campaign_id: campaignId };
      precheck('sourceCandidates', params);
      const value = checked('sourceCandidates', sourceCandidatesRequestSchema, body, CANDIDATE_REQUEST_RULES, params);
      checkCandidates('sourceCandidates', params, value, body);
      return (await send({ endpoint: 'sourceCandidates', params, body, response: addCandidatesResponseSchema })) as InvitationResponse;
    },

    /** `GET /campaigns/{campaign_id}/candidates`: one page, with its sort and filters. */
    async listCandidates(campaignId: string, query: ListCandidatesQuery = {}): Promise<ListCandidatesResponse> {
      const params = { campaign_id: campaignId };
      precheck('listCandidates', params);
      checked('listCandidates', listCandidatesQuerySchema, query, [], params);
      return send({ endpoint: 'listCandidates', params, query: query as Record<string, string | number | undefined>, response: listCandidatesResponseSchema });
    },

    /** `GET /campaigns/{campaign_id}/candidates/{candidate_id}`: one candidate and its interview (the sandbox's shape). */
    async getCandidate(campaignId: string, candidateId: string): Promise<CandidateDetails> {
      const params = { campaign_id: campaignId, candidate_id: candidateId };
      precheck('getCandidate', params);
      return send({ endpoint: 'getCandidate', params, response: candidateDetailsSchema });
    },

    /** `GET /voices`: default voices and ready clones, usable as `override_agent_id`. */
    async listVoices(): Promise<VoicesResponse> {
      precheck('listVoices');
      return send({ endpoint: 'listVoices', response: voicesResponseSchema });
    },

    /** `GET /account/credits`. */
    async getCredits(): Promise<CreditsResponse> {
      precheck('getCredits');
      return send({ endpoint: 'getCredits', response: creditsResponseSchema });
    },

    /**
     * Every candidate of a campaign in the order and with the filters asked, fetching page after
     * page (`per_page`, default 100) as the loop goes. The query is checked on the first step.
     */
    eachCandidate(campaignId: string, query: CandidateWalk = {}): AsyncGenerator<CandidateRecord, void, undefined> {
      const walk = { per_page: 100, ...query };
      return walkPages(
        async (page) => {
          const { candidates, pagination } = await client.listCandidates(campaignId, { ...walk, page });
          return { items: candidates, pagination };
        },
        (candidate) => candidate.candidate_id,
      );
    },

    /** Every campaign of the agency, newest first (the list is the sandbox's shape). */
    eachCampaign(query: CampaignWalk = {}): AsyncGenerator<CampaignStatusResponse, void, undefined> {
      const walk = { per_page: 100, ...query };
      return walkPages(
        async (page) => {
          const { campaigns, pagination } = await client.listCampaigns({ ...walk, page });
          return { items: campaigns, pagination };
        },
        (campaign) => campaign.campaign_id,
      );
    },
  };
  return client;
}

export type Client = ReturnType<typeof createClient>;
