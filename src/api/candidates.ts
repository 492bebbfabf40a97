import { z } from 'zod';
import { CANDIDATE_STATUSES, FAILURE_REASONS } from '../events/schemas.js';
import type { ErrorCode } from './errors.js';
import { LIMITS } from './limits.js';
import { pageQuery, paginationSchema } from './pagination.js';
import { isEmail, readPhone } from './phone.js';

// The candidate, and the operations that add, source and list candidates (docs/client.md's table:
// addCandidates, sourceCandidates, listCandidates; docs/sandbox.md, "What the document leaves open").

const CONTACT_MODES = ['call', 'sms', 'email'] as const;
const SOURCE_CONTACT_MODES = ['call', 'sms'] as const;
const CANDIDATE_SORTS = ['date_desc', 'date_asc', 'score_desc', 'score_asc'] as const;
/** The channel an invitation or a call actually went by (it decides the cost). */
const CHANNELS = ['call', 'sms', 'email'] as const;
/** The minimum-score filter's name is not shown in the document: the sandbox's choice. */
const MIN_SCORE_PARAMETER = 'min_score';

export type ContactMode = (typeof CONTACT_MODES)[number];
export type CandidateStatus = (typeof CANDIDATE_STATUSES)[number];
export type CandidateSort = (typeof CANDIDATE_SORTS)[number];
export type Channel = (typeof CHANNELS)[number];

/** A candidate as submitted. The phone may be named `phone_number` or `phone` (both appear in the document). */
export interface SubmittedCandidate {
  /** First name. */
  first_name: string;
  /** Last name. */
  last_name: string;
  /** The phone number: a French mobile, national or international. */
  phone_number?: string;
  /** The phone number, under its other name. */
  phone?: string;
  /** E-mail address. */
  email?: string;
  /** Any other field, sent as given. */
  [field: string]: unknown;
}

/** A submitted candidate read for a contact mode: who, how to reach them, and by which channel. */
export interface ReadCandidate {
  first_name: string;
  last_name: string;
  /** E.164, or null when none valid was given. */
  phone: string | null;
  email: string | null;
  channel: Channel;
}

/** Why one candidate of a request was not added: its index, a readable reason and the code behind it. */
export type CandidateError = {
  index: number;
  error: string;
  code: ErrorCode;
};

export type CandidateReading = { ok: true; candidate: ReadCandidate } | { ok: false; code: ErrorCode; error: string };

const hasText = (v: unknown): v is string => typeof v === 'string' && /\S/.test(v);

/**
 * One candidate of an add or source request, read for its contact mode (docs/client.md,
 * "Checked before sending"): `call` needs a valid phone and e-mail; `sms` falls back to e-mail when the
 * phone is absent or invalid; `email` falls back to SMS when the e-mail is. Checked one by one,
 * so that one bad candidate does not refuse the others (it is reported at its index).
 */
export function readSubmittedCandidate(value: unknown, mode: ContactMode): CandidateReading {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, code: 'VALIDATION_ERROR', error: 'a candidate must be an object {first_name, last_name, phone_number, email}' };
  }
  const submitted = value as Record<string, unknown>;
  for (const field of ['first_name', 'last_name'] as const) {
    if (!hasText(submitted[field])) return { ok: false, code: 'VALIDATION_ERROR', error: `${field} is required` };
  }
  const phoneField = submitted.phone_number !== undefined ? 'phone_number' : 'phone';
  const phoneGiven = submitted[phoneField] !== undefined && submitted[phoneField] !== null && submitted[phoneField] !== '';
  const phone = phoneGiven ? readPhone(submitted[phoneField]) : undefined;
  const emailGiven = submitted.email !== undefined && submitted.email !== null && submitted.email !== '';
  const email = emailGiven && isEmail(submitted.email) ? submitted.email : null;
  const validPhone = phone?.ok ? phone.e164 : null;
  const badPhone: CandidateReading | undefined =
    phone !== undefined && !phone.ok
      ? { ok: false, code: 'INVALID_PHONE_NUMBER', error: `${phoneField} ${JSON.stringify(submitted[phoneField])}: ${phone.message}` }
      : undefined;
  const badEmail: CandidateReading = { ok: false, code: 'VALIDATION_ERROR', error: 'email is not a valid e-mail address' };
  const reached = (channel: Channel): CandidateReading => ({
    ok: true,
    candidate: { first_name: submitted.first_name as string, last_name: submitted.last_name as string, phone: validPhone, email, channel },
  });

  if (mode === 'call') {
    if (!phoneGiven) return { ok: false, code: 'VALIDATION_ERROR', error: 'phone_number is required in call mode' };
    if (badPhone) return badPhone;
    if (!emailGiven) return { ok: false, code: 'VALIDATION_ERROR', error: 'email is required in call mode' };
    if (email === null) return badEmail;
    return reached('call');
  }
  const [first, second]: [Channel, Channel] = mode === 'sms' ? ['sms', 'email'] : ['email', 'sms'];
  const valid = (channel: Channel) => (channel === 'sms' ? validPhone !== null : email !== null);
  if (valid(first)) return reached(first);
  if (valid(second)) return reached(second);
  if (badPhone) return badPhone;
  if (emailGiven) return badEmail;
  return { ok: false, code: 'VALIDATION_ERROR', error: 'a valid phone number or e-mail address is required' };
}

const submittedCandidates = z
  // The elements are read one by one (readSubmittedCandidate); the type is the submitted shape.
  .array(
    z.custom<SubmittedCandidate>(() => true),
    { error: 'must be an array of candidates' },
  )
  .min(LIMITS.minCandidatesPerRequest, `must hold ${LIMITS.minCandidatesPerRequest} to ${LIMITS.maxCandidatesPerRequest} candidates`)
  .refine((list) => list.length <= LIMITS.maxCandidatesPerRequest, {
    message: `At most ${LIMITS.maxCandidatesPerRequest} candidates are accepted per request.`,
    params: { code: 'TOO_MANY_CANDIDATES', details: { max: LIMITS.maxCandidatesPerRequest } },
  });

/** Body of `POST /campaigns/{campaign_id}/candidates`. */
export const addCandidatesRequestSchema = z.object({
  candidates: submittedCandidates,
  contact_mode: z.enum(CONTACT_MODES, { error: `must be one of ${CONTACT_MODES.join(', ')}` }).default('call'),
});
/** The body of `addCandidates`. */
export type AddCandidatesRequest = z.input<typeof addCandidatesRequestSchema>;

/**
 * Body of `POST /campaigns/{campaign_id}/source`. The document gives `call` as the default but
 * calls the operation "source by SMS", equivalent to adding with `sms`: the sandbox defaults to `sms`.
 */
export const sourceCandidatesRequestSchema = z.object({
  candidates: submittedCandidates,
  contact_mode: z.enum(SOURCE_CONTACT_MODES, { error: `must be one of ${SOURCE_CONTACT_MODES.join(', ')}` }).default('sms'),
});
/** The body of `sourceCandidates`. */
export type SourceCandidatesRequest = z.input<typeof sourceCandidatesRequestSchema>;

export const CANDIDATE_REQUEST_RULES: readonly ErrorCode[] = ['TOO_MANY_CANDIDATES'];

const candidateErrorSchema = z.looseObject({ index: z.int().min(0), error: z.string(), code: z.string().optional() });

/** 201 answer in `call` mode. */
export const callModeResponseSchema = z.object({
  campaign_id: z.string(),
  candidates_added: z.int().min(0),
  candidates_skipped: z.int().min(0),
  calls_queued: z.int().min(0),
  errors: z.array(candidateErrorSchema),
});
/** The answer of `addCandidates` in `call` mode. */
export type CallModeResponse = z.infer<typeof callModeResponseSchema>;

/** 201 answer in `sms` and `email` modes, and of the source operation. */
export const invitationResponseSchema = z.object({
  campaign_id: z.string(),
  candidates_sourced: z.int().min(0),
  candidates_skipped: z.int().min(0),
  sms_sent: z.int().min(0),
  emails_sent: z.int().min(0),
  errors: z.array(candidateErrorSchema),
});
/** The answer of `addCandidates` in `sms` and `email` modes, and of `sourceCandidates`. */
export type InvitationResponse = z.infer<typeof invitationResponseSchema>;

export const addCandidatesResponseSchema = z.union([callModeResponseSchema, invitationResponseSchema]);

/** Query of `GET /campaigns/{campaign_id}/candidates`. `status` also takes `incomplete`, the fourth status. */
export const listCandidatesQuerySchema = z.object({
  ...pageQuery,
  sort: z.enum(CANDIDATE_SORTS, { error: `must be one of ${CANDIDATE_SORTS.join(', ')}` }).default('date_desc'),
  status: z.enum(CANDIDATE_STATUSES, { error: `must be one of ${CANDIDATE_STATUSES.join(', ')}` }).optional(),
  [MIN_SCORE_PARAMETER]: z.coerce
    .number({ error: 'must be a number from 0 to 10' })
    .min(0, 'must be a number from 0 to 10')
    .max(10, 'must be a number from 0 to 10')
    .optional(),
});
/** The query of `listCandidates`: the page, its size, the order, filters. */
export type ListCandidatesQuery = z.input<typeof listCandidatesQuerySchema>;

const nullableText = z.string().nullable();

/** A candidate as the list returns it. `email` and `phone` are null when the candidate gave none. */
export const candidateRecordSchema = z.object({
  candidate_id: z.uuid(),
  first_name: z.string(),
  last_name: z.string(),
  email: nullableText,
  phone: nullableText,
  status: z.enum(CANDIDATE_STATUSES),
  interview_score: z.number().min(0).max(10).nullable(),
  interview_date: z.iso.datetime().nullable(),
  availability: nullableText,
  salary_expectation: nullableText,
  candidate_alignment: nullableText,
  strengths: nullableText,
  concerns: nullableText,
  is_sourced: z.boolean(),
});
/** A candidate as `listCandidates` returns it. */
export type CandidateRecord = z.infer<typeof candidateRecordSchema>;

/** 200 answer of `GET /campaigns/{campaign_id}/candidates`: one page of a campaign's candidates. */
export const listCandidatesResponseSchema = z.object({
  candidates: z.array(candidateRecordSchema),
  pagination: paginationSchema,
});
/** The answer of `listCandidates`: one page of candidates. */
export type ListCandidatesResponse = z.infer<typeof listCandidatesResponseSchema>;

/** One candidate with its interview's details (the operation is referred to, not shown: the sandbox's choice). */
export const candidateDetailsSchema = candidateRecordSchema.extend({
  campaign_id: z.string(),
  channel: z.enum(CHANNELS),
  added_at: z.iso.datetime(),
  availability_start: nullableText,
  failure_reason: z.enum(FAILURE_REASONS).nullable(),
  responses: z.array(z.object({ question: z.string(), answer: z.string(), score: z.number(), explanation: z.string() })),
});
/** The answer of `getCandidate`: a candidate and their interview. */
export type CandidateDetails = z.infer<typeof candidateDetailsSchema>;
