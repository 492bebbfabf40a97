// One call to the service: throttled, sent with fetch, its answer read into a result or a typed
// error, and retried where `retry.ts` says so.
import type { z } from 'zod';
import { API_KEY_HEADER, API_PREFIX, ENDPOINTS, errorBodySchema, type EndpointName } from '../api/index.js';
import { readBodyWithin } from './body.js';
import {
  describeRequest,
  PrequalApiError,
  PrequalNetworkError,
  PrequalRedirectError,
  PrequalResponseError,
  type PrequalError,
  type SentRequest,
} from './errors.js';
import { decideRedirect, isRedirectStatus } from './origin.js';
import { decideRetry, type AttemptOutcome, type RetryOptions } from './retry.js';
import type { Clock, Throttle } from './throttle.js';

export interface TransportOptions {
  apiKey: string;
  /** `{base_url}`: the service's address; `/api/v1` is added unless it ends with it. */
  baseUrl: string;
  fetch: typeof fetch;
  throttle: Throttle | undefined;
  retry: Required<RetryOptions>;
  timeoutMs: number;
  /** An answer's body is read up to this many bytes; a longer one is a `PrequalResponseError`. */
  maxResponseBytes: number;
  validateResponses: boolean;
  clock: Clock;
  random: () => number;
  userAgent: string;
}

export interface Call<S extends z.ZodType> {
  endpoint: EndpointName;
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  response: S;
}

/** The full URL of an operation, its path parameters encoded. */
function urlOf(
  baseUrl: string,
  endpoint: EndpointName,
  params: Record<string, string> = {},
  query: Record<string, string | number | undefined> = {},
): string {
  const root = baseUrl.replace(/\/+$/, '');
  const prefix = root.endsWith(API_PREFIX) ? root : `${root}${API_PREFIX}`;
  const path = ENDPOINTS[endpoint].path.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return `${prefix}${path}${text === '' ? '' : `?${text}`}`;
}

// Codes of a connection that was never made: nothing reached the service.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCodeOf(error: unknown): string | undefined {
  type Coded = { code?: unknown; errors?: unknown; cause?: unknown } | null | undefined;
  for (let e = error as Coded, depth = 0; e != null && depth < 4; e = e.cause as Coded, depth++) {
    if (typeof e.code === 'string') return e.code;
    const first = (Array.isArray(e.errors) ? e.errors[0] : undefined) as Coded;
    if (typeof first?.code === 'string') return first.code;
  }
  return undefined;
}

type Attempt<T> = { ok: true; value: T } | { ok: false; error: PrequalError; outcome?: AttemptOutcome };

function retryAfterMs(details: Record<string, unknown> | undefined, header: string | null): number {
  const fromDetails = Number(details?.retry_after);
  const seconds = Number.isFinite(fromDetails) && fromDetails >= 0 ? fromDetails : Number(header);
  // Without either, a second: the shortest wait the service ever asks for.
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds * 1000) : 1000;
}

/** What one attempt brought back: an answer read within the limit, or why there is none to read. */
type Exchange =
  | { kind: 'answer'; response: Response; text: string }
  | { kind: 'too-large'; status: number; limit: number }
  | { kind: 'redirect-refused'; error: PrequalRedirectError };

export function createTransport(options: TransportOptions) {
  return {
    urlOf: (endpoint: EndpointName, params?: Record<string, string>, query?: Record<string, string | number | undefined>) =>
      urlOf(options.baseUrl, endpoint, params, query),

    async send<S extends z.ZodType>(call: Call<S>): Promise<z.output<S>> {
      const url = urlOf(options.baseUrl, call.endpoint, call.params, call.query);
      const request = describeRequest(call.endpoint, ENDPOINTS[call.endpoint].method, url, call.body);
      for (let retries = 0; ; retries++) {
        const result = await attempt(options, call, request, retries + 1);
        if (result.ok) return result.value;
        if (result.outcome === undefined) throw result.error;
        const decision = decideRetry(result.outcome, call.endpoint, retries, options.retry, options.random);
        if (!decision.retry) throw result.error;
        // The service refuses every request of the key until then, not only this one.
        if (result.outcome.kind === 'rate-limited') options.throttle?.pause(decision.delayMs);
        await options.clock.sleep(decision.delayMs);
      }
    },
  };
}

/**
 * Sends the request, following same-origin redirects only (see origin.ts), and reads the body
 * within `maxResponseBytes`. Throws what fetch throws: the caller calls that a network failure.
 */
async function exchange(options: TransportOptions, call: Call<z.ZodType>, request: SentRequest, attempts: number): Promise<Exchange> {
  const { method } = ENDPOINTS[call.endpoint];
  const signal = AbortSignal.timeout(options.timeoutMs);
  let url = request.url;
  for (let redirects = 0; ; redirects++) {
    // Each hop is a request of the key: it counts against the service's limits.
    if (redirects > 0) await options.throttle?.acquire();
    const response = await options.fetch(url, {
      method,
      headers: {
        [API_KEY_HEADER]: options.apiKey,
        accept: 'application/json',
        'user-agent': options.userAgent,
        ...(call.body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
      redirect: 'manual',
      signal,
    });
    const location = response.headers.get('location');
    if (isRedirectStatus(response.status) && location !== null) {
      await response.body?.cancel().catch(() => {});
      const decision = decideRedirect(url, location, response.status, method, redirects);
      if (!decision.follow) {
        const from = new URL(url);
        const error = new PrequalRedirectError({
          status: response.status,
          target: decision.target,
          reason: decision.reason,
          from: `${from.origin}${from.pathname}`,
          request,
          attempts,
        });
        return { kind: 'redirect-refused', error };
      }
      url = decision.url;
      continue;
    }
    const body = await readBodyWithin(response, options.maxResponseBytes);
    return body.ok ? { kind: 'answer', response, text: body.text } : { kind: 'too-large', status: response.status, limit: body.limit };
  }
}

async function attempt<S extends z.ZodType>(
  options: TransportOptions,
  call: Call<S>,
  request: SentRequest,
  attempts: number,
): Promise<Attempt<z.output<S>>> {
  await options.throttle?.acquire();
  let exchanged: Exchange;
  try {
    exchanged = await exchange(options, call, request, attempts);
  } catch (cause) {
    const timedOut = (cause as Error)?.name === 'TimeoutError';
    const notSent = !timedOut && NOT_SENT_CODES.has(errorCodeOf(cause) ?? '');
    return {
      ok: false,
      error: new PrequalNetworkError({ cause, request, attempts, notSent, timedOut }),
      outcome: { kind: 'network', notSent },
    };
  }
  if (exchanged.kind === 'redirect-refused') return { ok: false, error: exchanged.error };
  if (exchanged.kind === 'too-large') {
    const issues = [`body: larger than ${exchanged.limit} bytes, the client's maxResponseBytes; not read further`];
    return { ok: false, error: new PrequalResponseError({ status: exchanged.status, request, issues }) };
  }
  return answerOf(options, call, request, attempts, exchanged.response, exchanged.text);
}

/** What an answer means: the value, or the typed error and whether a retry may help. */
function answerOf<S extends z.ZodType>(
  options: TransportOptions,
  call: Call<S>,
  request: SentRequest,
  attempts: number,
  response: Response,
  text: string,
): Attempt<z.output<S>> {
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.status >= 200 && response.status < 300) {
    if (!options.validateResponses) return { ok: true, value: json as z.output<S> };
    const parsed = call.response.safeParse(json);
    if (parsed.success) return { ok: true, value: json as z.output<S> }; // the body as sent: fields a newer service adds stay readable
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
    return { ok: false, error: new PrequalResponseError({ status: response.status, request, issues }) };
  }

  const envelope = errorBodySchema.safeParse(json);
  const outcome: AttemptOutcome | undefined =
    response.status === 429
      ? {
          kind: 'rate-limited',
          retryAfterMs: retryAfterMs(envelope.success ? envelope.data.error.details : undefined, response.headers.get('retry-after')),
        }
      : response.status >= 500
        ? { kind: 'server-error', status: response.status }
        : undefined;
  if (!envelope.success) {
    return {
      ok: false,
      error: new PrequalResponseError({
        status: response.status,
        request,
        issues: ['body: not the error envelope {error: {code, message, details}}'],
      }),
      outcome,
    };
  }
  const { code, message, details } = envelope.data.error;
  return { ok: false, error: new PrequalApiError({ status: response.status, code, message, details, request, attempts }), outcome };
}

export type Transport = ReturnType<typeof createTransport>;
