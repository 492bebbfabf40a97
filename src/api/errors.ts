import { z } from 'zod';

/** A code of the service's error table (`ERROR_CODES` has exactly these). */
export type ErrorCode =
  | 'MISSING_API_KEY'
  | 'INVALID_API_KEY_FORMAT'
  | 'INVALID_API_KEY'
  | 'AGENCY_INACTIVE'
  | 'INSUFFICIENT_CREDITS'
  | 'MISSING_REQUIRED_FIELDS'
  | 'INVALID_CONTRACT_TYPE'
  | 'INVALID_LANGUAGE'
  | 'TOO_MANY_QUESTIONS'
  | 'MISSING_QUESTION_WEIGHTS'
  | 'WEIGHTS_MISMATCH'
  | 'INVALID_WEIGHT_VALUE'
  | 'BINARY_EVALUATIONS_MISMATCH'
  | 'INVALID_AUTOMATIC_SELECTION_THRESHOLD'
  | 'MESSAGE_TOO_LONG'
  | 'INVALID_OVERRIDE_AGENT_ID'
  | 'CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE'
  | 'CAMPAIGN_NOT_FOUND'
  | 'VALIDATION_ERROR'
  | 'INVALID_PHONE_NUMBER'
  | 'TOO_MANY_CANDIDATES'
  | 'DUPLICATE_CANDIDATE'
  | 'RESOURCE_NOT_FOUND'
  | 'RESOURCE_CONFLICT'
  | 'RATE_LIMIT_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'REQUEST_TOO_LARGE';

/**
 * Every error code of the service, with its HTTP status and a default message: this table is the
 * package's record of them, which the sandbox answers with and the client throws (docs/sandbox.md,
 * docs/client.md). `documented: false` marks the one code the sandbox adds for what the service's
 * API documentation leaves open (a body over the size limit: docs/sandbox.md, "What the document
 * leaves open").
 */
export const ERROR_CODES = {
  MISSING_API_KEY: { status: 401, message: 'The X-API-Key header is missing.', documented: true },
  INVALID_API_KEY_FORMAT: {
    status: 401,
    message: 'The API key is malformed: expected a prefix ending in "live_" and 32 or more characters.',
    documented: true,
  },
  INVALID_API_KEY: { status: 401, message: 'The API key is not recognised.', documented: true },
  AGENCY_INACTIVE: { status: 401, message: 'The agency account of this API key is disabled.', documented: true },
  INSUFFICIENT_CREDITS: { status: 402, message: 'Not enough credits for this operation.', documented: true },
  MISSING_REQUIRED_FIELDS: { status: 400, message: 'Required campaign fields are missing.', documented: true },
  INVALID_CONTRACT_TYPE: { status: 400, message: 'The contract type is not one of the accepted values.', documented: true },
  INVALID_LANGUAGE: { status: 400, message: 'The language must be fr, en or es.', documented: true },
  TOO_MANY_QUESTIONS: { status: 400, message: 'At most 10 questions are accepted.', documented: true },
  MISSING_QUESTION_WEIGHTS: { status: 400, message: 'question_weights is required when questions is given.', documented: true },
  WEIGHTS_MISMATCH: { status: 400, message: 'question_weights must have as many elements as questions.', documented: true },
  INVALID_WEIGHT_VALUE: { status: 400, message: 'Each question weight must be 0, 0.5, 1, 1.5 or 2.', documented: true },
  BINARY_EVALUATIONS_MISMATCH: {
    status: 400,
    message: 'question_binary_evaluations must have as many elements as questions.',
    documented: true,
  },
  INVALID_AUTOMATIC_SELECTION_THRESHOLD: {
    status: 400,
    message: 'automatic_selection_threshold must be 8.0, 8.5, 9.0, 9.5, 10.0 or null.',
    documented: true,
  },
  MESSAGE_TOO_LONG: { status: 400, message: 'A message is longer than 350 characters.', documented: true },
  INVALID_OVERRIDE_AGENT_ID: { status: 400, message: 'The voice was not found or is not accessible by the agency.', documented: true },
  CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE: {
    status: 400,
    message: 'custom_language_question requires a language_test_mode other than none.',
    documented: true,
  },
  CAMPAIGN_NOT_FOUND: { status: 404, message: 'The campaign does not exist or is not owned by the agency.', documented: true },
  VALIDATION_ERROR: { status: 400, message: 'The request is invalid.', documented: true },
  INVALID_PHONE_NUMBER: { status: 400, message: 'The phone number is not a valid French mobile number.', documented: true },
  TOO_MANY_CANDIDATES: { status: 400, message: 'At most 100 candidates are accepted per request.', documented: true },
  DUPLICATE_CANDIDATE: { status: 400, message: 'The candidate already exists.', documented: true },
  RESOURCE_NOT_FOUND: { status: 404, message: 'The resource does not exist.', documented: true },
  RESOURCE_CONFLICT: { status: 400, message: 'The candidate already exists.', documented: true },
  RATE_LIMIT_EXCEEDED: { status: 429, message: 'Too many requests for this API key.', documented: true },
  INTERNAL_ERROR: { status: 500, message: 'An internal error occurred.', documented: true },
  REQUEST_TOO_LARGE: { status: 413, message: 'The request body is larger than 10 MB.', documented: false },
} as const satisfies Record<ErrorCode, { status: number; message: string; documented: boolean }>;

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** The envelope of every error answer: `{ error: { code, message, details? } }`. */
export const errorBodySchema = z.object({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
