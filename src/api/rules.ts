import { z } from 'zod';
import { ERROR_CODES, isErrorCode, type ErrorCode } from './errors.js';

/** What a refused request is answered with: the envelope's code, message and details. */
export interface Violation {
  /** The service's error code. */
  code: ErrorCode;
  /** The service's message. */
  message: string;
  /** The envelope's details, when the code has any. */
  details?: Record<string, unknown>;
}

/**
 * A zod value that fails with a documented error code, not a generic one: the code and its
 * details travel in the issue's `params`, so a schema says by itself which code each rule gives.
 */
export function coded<T>(code: ErrorCode, check: (value: unknown) => boolean, details?: Record<string, unknown>, message?: string) {
  // Not aborting, so that the object's cross-field rules still run and the priority decides.
  return z.custom<T>(check, { message: message ?? ERROR_CODES[code].message, params: { code, ...(details && { details }) }, abort: false });
}

/** A `superRefine`/`check` issue carrying a documented code. */
export function codedIssue(code: ErrorCode, path: PropertyKey[], details?: Record<string, unknown>, message?: string) {
  return {
    code: 'custom' as const,
    path,
    message: message ?? ERROR_CODES[code].message,
    params: { code, ...(details && { details }) },
    input: undefined,
  };
}

/** `data.questions[2]` style, for details keys. */
function pathText(path: readonly PropertyKey[]): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('');
}

function codeOf(issue: z.core.$ZodIssue): ErrorCode | undefined {
  const params = (issue as { params?: { code?: unknown } }).params;
  return isErrorCode(params?.code) ? params.code : undefined;
}

/**
 * The one error a request is answered with when its body breaks several rules: the first code
 * of `priority` that any issue carries; otherwise `VALIDATION_ERROR`, whose details map each
 * field to its message (the codes: ERROR_CODES, src/api/errors.ts).
 */
function violationOf(error: z.ZodError, priority: readonly ErrorCode[]): Violation {
  for (const code of priority) {
    const issue = error.issues.find((i) => codeOf(i) === code);
    if (issue === undefined) continue;
    const params = (issue as { params?: { details?: Record<string, unknown> } }).params;
    const field = pathText(issue.path);
    return {
      code,
      message: issue.message,
      details: { ...(field !== '' && { field }), ...params?.details },
    };
  }
  const details: Record<string, string> = {};
  for (const issue of error.issues) {
    const field = pathText(issue.path) || 'body';
    details[field] ??= issue.message;
  }
  return { code: 'VALIDATION_ERROR', message: ERROR_CODES.VALIDATION_ERROR.message, details };
}

/** A value parsed by a schema, or the violation to answer with. */
export type Checked<T> = { ok: true; value: T } | { ok: false; violation: Violation };

export function check<S extends z.ZodType>(schema: S, input: unknown, priority: readonly ErrorCode[]): Checked<z.output<S>> {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, value: result.data } : { ok: false, violation: violationOf(result.error, priority) };
}
