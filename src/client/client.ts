// createClient: every operation of the service's REST API (docs/client.md's table), typed by the
// schemas of src/api, each request checked against the documented rules before it is sent.
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
import { createTransport, type Transport } from './transport.js';

/** Where a client sends, with which key, and how it paces, retries and checks. */
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
  /** Retries of 429, 5xx and network failures (see docs/client.md). */
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
/** The campaign list's filters and order, without the page (the iterator walks them). */
export type CampaignWalk = Omit<ListCampaignsQuery, 'page'>;

const isThrottle = (value: unknown): value is Throttle => typeof (value as Throttle | undefined)?.acquire === 'function';

/** What every operation needs: the key it checks, and the transport that sends. */
interface Caller {
  apiKey: string;
  transport: Transport;
}

/** A client of the service's REST API: one method per operation, each request checked against the documented rules before it is sent, throttled and retried. Throws TypeError for a base URL that is not https (unless `allowInsecureHttp`) or invalid options. */
export function createClient(options: ClientOptions) {
  const c: Caller = { apiKey: options.apiKey, transport: transportFor(options) };
  // Every method is async: a broken rule rejects the promise like an error answer would, never throws synchronously.
  const client = {
    /** `POST /campaigns/create`. Not retried after a 5xx or a lost answer (it could create two). */
    createCampaign: (body: CreateCampaignRequest) => createCampaign(c, body),
    /** `PATCH /campaigns/{campaign_id}`: only the fields given change. */
    modifyCampaign: (campaignId: string, body: ModifyCampaignRequest) => modifyCampaign(c, campaignId, body),
    /** `PATCH /campaigns/{campaign_id}/status`. */
    changeCampaignStatus: (campaignId: string, status: CampaignStatus) => changeCampaignStatus(c, campaignId, status),
    /** `GET /campaigns/{campaign_id}/status`: the status and `stats`. */
    getCampaignStatus: (campaignId: string): Promise<CampaignStatusResponse> =>
      read(c, 'getCampaignStatus', { campaign_id: campaignId }, campaignStatusResponseSchema),
    /** `GET /campaigns/{campaign_id}`: every field (not shown in the document: the sandbox's shape). */
    getCampaign: (campaignId: string): Promise<CampaignRecord> => read(c, 'getCampaign', { campaign_id: campaignId }, campaignRecordSchema),
    /** `GET /campaigns`: one page (not shown in the document: the sandbox's shape). */
    listCampaigns: (query: ListCampaignsQuery = {}) => listCampaigns(c, query),
    /** `POST /campaigns/{campaign_id}/candidates` (1 to 100; `contact_mode` default `call`). */
    addCandidates: (campaignId: string, body: AddCandidatesRequest) => addCandidates(c, campaignId, body),
    /** `POST /campaigns/{campaign_id}/source`: sourcing by SMS (1 to 100). */
    sourceCandidates: (campaignId: string, body: SourceCandidatesRequest) => sourceCandidates(c, campaignId, body),
    /** `GET /campaigns/{campaign_id}/candidates`: one page, with its sort and filters. */
    listCandidates: (campaignId: string, query: ListCandidatesQuery = {}) => listCandidates(c, campaignId, query),
    /** `GET /campaigns/{campaign_id}/candidates/{candidate_id}`: one candidate and its interview (the sandbox's shape). */
    getCandidate: (campaignId: string, candidateId: string): Promise<CandidateDetails> =>
      read(c, 'getCandidate', { campaign_id: campaignId, candidate_id: candidateId }, candidateDetailsSchema),
    /** `GET /voices`: default voices and ready clones, usable as `override_agent_id`. */
    listVoices: (): Promise<VoicesResponse> => read(c, 'listVoices', undefined, voicesResponseSchema),
    /** `GET /account/credits`. */
    getCredits: (): Promise<CreditsResponse> => read(c, 'getCredits', undefined, creditsResponseSchema),
    /**
     * Every candidate of a campaign in the order and with the filters asked, fetching page after
     * page (`per_page`, default 100) as the loop goes. The query is checked on the first step.
     */
    eachCandidate: (campaignId: string, query: CandidateWalk = {}): AsyncGenerator<CandidateRecord, void, undefined> => {
      const walk = { per_page: 100, ...query };
      return walkPages(
        async (page) => {
          const { candidates, pagination } = await listCandidates(c, campaignId, { ...walk, page });
          return { items: candidates, pagination };
        },
        (candidate) => candidate.candidate_id,
      );
    },
    /** Every campaign of the agency, newest first (the list is the sandbox's shape). */
    eachCampaign: (query: CampaignWalk = {}): AsyncGenerator<CampaignStatusResponse, void, undefined> => {
      const walk = { per_page: 100, ...query };
      return walkPages(
        async (page) => {
          const { campaigns, pagination } = await listCampaigns(c, { ...walk, page });
          return { items: campaigns, pagination };
        },
        (campaign) => campaign.campaign_id,
      );
    },
  };
  return client;
}

/** The transport of a client's options, checked: the base URL, the body cap, the throttle. */
function transportFor(options: ClientOptions): Transport {
  const problem = serviceUrlProblem(
    typeof options?.baseUrl === 'string' ? options.baseUrl : '',
    options?.allowInsecureHttp === true,
    'allowInsecureHttp: true',
  );
  if (problem !== undefined) throw new TypeError(`createClient: baseUrl ${problem}`);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!(Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0))
    throw new TypeError(`createClient: maxResponseBytes must be a whole number of bytes above 0, got ${String(maxResponseBytes)}`);
  const clock = options.clock ?? systemClock;
  const throttle =
    options.throttle === false
      ? undefined
      : isThrottle(options.throttle)
        ? options.throttle
        : createThrottle({ ...options.throttle, clock });
  return createTransport({
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
}

/** Throws the error the service would answer, without sending, when `violation` is set. */
function refuse(
  c: Caller,
  endpoint: EndpointName,
  violation: Violation,
  params?: Record<string, string>,
  body?: unknown,
  query?: Record<string, string | number | undefined>,
): never {
  const request = describeRequest(endpoint, ENDPOINTS[endpoint].method, c.transport.urlOf(endpoint, params, query), body);
  throw PrequalApiError.fromViolation(violation, request);
}

/** The checks every request passes first: the key (the service's 401s) and the path parameters. */
function precheck(c: Caller, endpoint: EndpointName, params: Record<string, string> = {}): void {
  const key = c.apiKey;
  const header = { header: API_KEY_HEADER };
  if (key === undefined || key === null || key === '')
    refuse(c, endpoint, { code: 'MISSING_API_KEY', message: ERROR_CODES.MISSING_API_KEY.message, details: header }, params);
  if (!isApiKeyFormat(key))
    refuse(c, endpoint, { code: 'INVALID_API_KEY_FORMAT', message: ERROR_CODES.INVALID_API_KEY_FORMAT.message, details: header }, params);
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== 'string' || value === '') {
      refuse(
        c,
        endpoint,
        { code: 'VALIDATION_ERROR', message: ERROR_CODES.VALIDATION_ERROR.message, details: { [name]: 'must be a non-empty string' } },
        params,
      );
    }
  }
}

/** Checks `input` against `schema` with the rule priority of the service; returns the parsed value. */
function checked<S extends z.ZodType>(
  c: Caller,
  endpoint: EndpointName,
  schema: S,
  input: unknown,
  priority: readonly ErrorCode[],
  params?: Record<string, string>,
): z.output<S> {
  const result = check(schema, input, priority);
  if (!result.ok) refuse(c, endpoint, result.violation, params, input);
  return result.value;
}

/**
 * Each candidate read as the service reads it for its contact mode. The service reports a bad
 * candidate in `errors` and adds the others; the client refuses the whole request with that
 * candidate's code and index instead, so that no bad candidate is sent unnoticed.
 */
function checkCandidates(
  c: Caller,
  endpoint: EndpointName,
  params: Record<string, string>,
  body: { candidates: unknown[]; contact_mode: 'call' | 'sms' | 'email' },
  input: unknown,
): void {
  body.candidates.forEach((candidate, index) => {
    const reading = readSubmittedCandidate(candidate, body.contact_mode);
    if (!reading.ok) {
      // The phone itself is left out: errors get logged, and a phone is PII.
      refuse(
        c,
        endpoint,
        {
          code: reading.code,
          message: ERROR_CODES[reading.code].message,
          details: { index, error: reading.error.replace(/"[^"]*"/g, '…') },
        },
        params,
        input,
      );
    }
  });
}

/** A read with no body to check: the key and the path parameters, then the request. */
async function read<S extends z.ZodType>(
  c: Caller,
  endpoint: EndpointName,
  params: Record<string, string> | undefined,
  response: S,
): Promise<z.output<S>> {
  precheck(c, endpoint, params);
  return c.transport.send({ endpoint, ...(params !== undefined && { params }), response });
}

async function createCampaign(c: Caller, body: CreateCampaignRequest): Promise<CreateCampaignResponse> {
  precheck(c, 'createCampaign');
  checked(c, 'createCampaign', createCampaignRequestSchema, body, CREATE_CAMPAIGN_RULES);
  return c.transport.send({ endpoint: 'createCampaign', body, response: createCampaignResponseSchema });
}

async function modifyCampaign(c: Caller, campaignId: string, body: ModifyCampaignRequest): Promise<ModifyCampaignResponse> {
  const params = { campaign_id: campaignId };
  precheck(c, 'modifyCampaign', params);
  checked(c, 'modifyCampaign', modifyCampaignRequestSchema(), body, MODIFY_CAMPAIGN_RULES, params);
  return c.transport.send({ endpoint: 'modifyCampaign', params, body, response: modifyCampaignResponseSchema });
}

async function changeCampaignStatus(c: Caller, campaignId: string, status: CampaignStatus): Promise<ChangeStatusResponse> {
  const params = { campaign_id: campaignId };
  precheck(c, 'changeCampaignStatus', params);
  const body = { status };
  checked(c, 'changeCampaignStatus', changeStatusRequestSchema, body, [], params);
  return c.transport.send({ endpoint: 'changeCampaignStatus', params, body, response: changeStatusResponseSchema });
}

async function listCampaigns(c: Caller, query: ListCampaignsQuery): Promise<ListCampaignsResponse> {
  precheck(c, 'listCampaigns');
  checked(c, 'listCampaigns', listCampaignsQuerySchema, query, []);
  return c.transport.send({
    endpoint: 'listCampaigns',
    query: query as Record<string, string | number | undefined>,
    response: listCampaignsResponseSchema,
  });
}

async function addCandidates(c: Caller, campaignId: string, body: AddCandidatesRequest): Promise<CallModeResponse | InvitationResponse> {
  const params = { campaign_id: campaignId };
  precheck(c, 'addCandidates', params);
  const value = checked(c, 'addCandidates', addCandidatesRequestSchema, body, CANDIDATE_REQUEST_RULES, params);
  checkCandidates(c, 'addCandidates', params, value, body);
  return c.transport.send({ endpoint: 'addCandidates', params, body, response: addCandidatesResponseSchema });
}

async function sourceCandidates(c: Caller, campaignId: string, body: SourceCandidatesRequest): Promise<InvitationResponse> {
  const params = { campaign_id: campaignId };
  precheck(c, 'sourceCandidates', params);
  const value = checked(c, 'sourceCandidates', sourceCandidatesRequestSchema, body, CANDIDATE_REQUEST_RULES, params);
  checkCandidates(c, 'sourceCandidates', params, value, body);
  return (await c.transport.send({
    endpoint: 'sourceCandidates',
    params,
    body,
    response: addCandidatesResponseSchema,
  })) as InvitationResponse;
}

async function listCandidates(c: Caller, campaignId: string, query: ListCandidatesQuery): Promise<ListCandidatesResponse> {
  const params = { campaign_id: campaignId };
  precheck(c, 'listCandidates', params);
  checked(c, 'listCandidates', listCandidatesQuerySchema, query, [], params);
  return c.transport.send({
    endpoint: 'listCandidates',
    params,
    query: query as Record<string, string | number | undefined>,
    response: listCandidatesResponseSchema,
  });
}

/** A client of the service's REST API, as `createClient` returns it. */
export type Client = ReturnType<typeof createClient>;
