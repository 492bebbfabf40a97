import type { Violation } from '../api/index.js';

/** The request an error came from (never its body: it may hold candidates' personal data). */
export interface RequestInfo {
  method: string;
  path: string;
}

/**
 * An answer of the service in its error envelope, or a documented rule the client checked before
 * sending (`local: true`, `status` the one the service would give, no request made).
 */
export class PrequalApiError extends Error {
  override name = 'PrequalApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    readonly request: RequestInfo,
    readonly local = false,
  ) {
    super(`${code}: ${message}`);
  }

  static fromViolation(violation: Violation, status: number, request: RequestInfo): PrequalApiError {
    return new PrequalApiError(status, violation.code, violation.message, violation.details, request, true);
  }
}

/** The service could not be reached, or did not answer in time (after the retries). */
export class PrequalNetworkError extends Error {
  override name = 'PrequalNetworkError';
  constructor(
    message: string,
    readonly request: RequestInfo,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
