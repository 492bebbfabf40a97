import { ERROR_CODES, type ErrorCode, type Violation } from '../api/index.js';

/** What a route answers: a status, a JSON body, and perhaps headers. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The one place an error answer is built: the documented status and the `{error}` envelope. */
export function errorReply(code: ErrorCode, details?: Record<string, unknown>, message?: string, headers?: Record<string, string>): Reply {
  return {
    status: ERROR_CODES[code].status,
    body: { error: { code, message: message ?? ERROR_CODES[code].message, ...(details !== undefined && { details }) } },
    ...(headers !== undefined && { headers }),
  };
}

export function violationReply(violation: Violation): Reply {
  return errorReply(violation.code, violation.details, violation.message);
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body });
