// What a call can fail with: the service's answer (or the same answer found locally), the
// network, or an answer that is not the documented one.
import { ERROR_CODES, type ErrorCode, type Violation } from '../api/index.js';
import type { EndpointName } from '../api/index.js';

/**
 * The request a failure came from. `body` is kept (it can hold candidate PII) but not
 * enumerable, so that logging or serialising the error does not print it; the API key is never kept.
 */
export interface SentRequest {
  /** The operation, by its client method's name. */
  endpoint: EndpointName;
  /** The HTTP method. */
  method: string;
  /** The full URL, query included. */
  url: string;
  /** The request body, when it had one (not enumerable). */
  body?: unknown;
}

export function describeRequest(endpoint: EndpointName, method: string, url: string, body: unknown): SentRequest {
  const request: SentRequest = { endpoint, method, url };
  if (body !== undefined) Object.defineProperty(request, 'body', { value: body, enumerable: false });
  return request;
}

/**
 * An error answer of the service, in its envelope `{error: {code, message, details}}`. Thrown
 * too, with `local: true` and no request made, when the client finds a documented rule broken
 * before sending: same status, code and details as the service would answer.
 */
export class PrequalApiError extends Error {
  /** Always `PrequalApiError`, to tell it apart from other errors. */
  override readonly name = 'PrequalApiError';
  /** The HTTP status (the service's, or the one it would answer). */
  readonly status: number;
  /** A code of the service's table, or another one a newer service answers. */
  readonly code: ErrorCode | (string & {});
  /** The envelope's `details`, when it had any. */
  readonly details: Record<string, unknown> | undefined;
  /** The request it answered. */
  readonly request: SentRequest;
  /** True when the client refused the call itself, before any request. */
  readonly local: boolean;
  /** Requests made for this call (0 when local). */
  readonly attempts: number;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    details?: Record<string, unknown>;
    request: SentRequest;
    local?: boolean;
    attempts?: number;
  }) {
    super(`${init.status} ${init.code}: ${init.message} (${init.request.method} ${init.request.endpoint})`);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.request = init.request;
    this.local = init.local ?? false;
    this.attempts = init.attempts ?? (this.local ? 0 : 1);
  }

  /** The error a broken rule is answered with, found before sending. */
  static fromViolation(violation: Violation, request: SentRequest): PrequalApiError {
    return new PrequalApiError({ status: ERROR_CODES[violation.code].status, ...violation, request, local: true, attempts: 0 });
  }
}

/** No answer: the connection failed, was reset, or the per-attempt timeout passed. */
export class PrequalNetworkError extends Error {
  /** Always `PrequalNetworkError`, to tell it apart from other errors. */
  override readonly name = 'PrequalNetworkError';
  /** The request that failed. */
  readonly request: SentRequest;
  /** Attempts made, retries included. */
  readonly attempts: number;
  /** The connection was refused or the host not found: the request surely never reached the service. */
  readonly notSent: boolean;
  /** Whether the last attempt outlived `timeoutMs`. */
  readonly timedOut: boolean;

  constructor(init: { cause: unknown; request: SentRequest; attempts: number; notSent: boolean; timedOut: boolean }) {
    const why = init.timedOut ? 'timed out' : init.notSent ? 'could not connect' : 'failed';
    super(
      `${init.request.method} ${init.request.endpoint} ${why} after ${init.attempts} attempt(s): ${(init.cause as Error)?.message ?? String(init.cause)}`,
      {
        cause: init.cause,
      },
    );
    this.request = init.request;
    this.attempts = init.attempts;
    this.notSent = init.notSent;
    this.timedOut = init.timedOut;
  }
}

/**
 * An answer that is not the documented one: a success body that does not match its schema, or
 * an error status without the service's envelope (a proxy's HTML page, say).
 */
export class PrequalResponseError extends Error {
  /** Always `PrequalResponseError`, to tell it apart from other errors. */
  override readonly name = 'PrequalResponseError';
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The request it answered. */
  readonly request: SentRequest;
  /** Where the body departs from the schema (paths and messages; no values). */
  readonly issues: string[];

  constructor(init: { status: number; request: SentRequest; issues: string[] }) {
    super(
      `${init.request.method} ${init.request.endpoint} answered ${init.status} with a body that is not the documented one: ${init.issues.slice(0, 3).join('; ')}`,
    );
    this.status = init.status;
    this.request = init.request;
    this.issues = init.issues;
  }
}

/**
 * The service's address answered with a redirect the client does not follow with the key: to
 * another origin, from https to http, a POST or PATCH that would become a GET, or one too many.
 * Nothing was sent there. Point `baseUrl` at the service's own address (the `target`, if it is
 * the service's new home).
 */
export class PrequalRedirectError extends Error {
  /** Always `PrequalRedirectError`, to tell it apart from other errors. */
  override readonly name = 'PrequalRedirectError';
  /** The redirect's status: 301, 302, 303, 307 or 308. */
  readonly status: number;
  /** Where the redirect pointed (resolved, without credentials). */
  readonly target: string;
  /** The request that was redirected. */
  readonly request: SentRequest;
  /** Attempts made, retries included. */
  readonly attempts: number;

  constructor(init: { status: number; target: string; reason: string; from: string; request: SentRequest; attempts: number }) {
    super(
      `${init.request.method} ${init.request.endpoint}: ${init.from} answered ${init.status}, a redirect ${init.reason} (${init.target}); ` +
        'not followed, so the API key was not sent there. Point baseUrl at the service’s own https address',
    );
    this.status = init.status;
    this.target = init.target;
    this.request = init.request;
    this.attempts = init.attempts;
  }
}

/** Every error a client call rejects with. */
export type PrequalError = PrequalApiError | PrequalNetworkError | PrequalResponseError | PrequalRedirectError;
