import { z } from 'zod';
import { CAMPAIGN_STATUSES } from '../events/schemas.js';
import type { ErrorCode } from './errors.js';
import { LIMITS } from './limits.js';
import { pageQuery, paginationSchema } from './pagination.js';
import { coded, codedIssue } from './rules.js';

// The campaign's fields, and the operations that create and modify one (docs/client.md's table:
// createCampaign, modifyCampaign; docs/sandbox.md, "What the document leaves open").

const CONTRACT_TYPES = [
  'CDI',
  'CDD',
  'Stage',
  'Intérim',
  "Contrat d'apprentissage",
  'Contrat de professionnalisation',
  'Freelance',
] as const;
const LANGUAGES = ['fr', 'en', 'es'] as const;
const QUESTION_WEIGHTS = [0, 0.5, 1, 1.5, 2] as const;
const SELECTION_THRESHOLDS = [8, 8.5, 9, 9.5, 10] as const;
const SALARY_QUESTION_FORMATS = ['Non', 'Annuelles', 'Mensuelles', 'Horaires'] as const;
const LANGUAGE_TEST_MODES = [
  'none',
  'english',
  'spanish',
  'italian',
  'german',
  'chinese',
  'portuguese',
  'arabic',
] as const satisfies readonly LanguageTestMode[];
const REQUIRED_CAMPAIGN_FIELDS = ['job_title', 'contract_type', 'job_description'] as const;
/** `ai`: the questions were generated from the job description; `default`: the client supplied them. */
const QUESTIONS_SOURCES = ['ai', 'default'] as const;

export type ContractType = (typeof CONTRACT_TYPES)[number];
export type Language = (typeof LANGUAGES)[number];
export type QuestionWeight = (typeof QUESTION_WEIGHTS)[number];
type SelectionThreshold = (typeof SELECTION_THRESHOLDS)[number];
/** The language a campaign's interview tests, or `none`. */
export type LanguageTestMode = 'none' | 'english' | 'spanish' | 'italian' | 'german' | 'chinese' | 'portuguese' | 'arabic';
/** A campaign's status. */
export type CampaignStatus = 'active' | 'paused' | 'completed';

const oneOf =
  <T>(list: readonly T[]) =>
  (value: unknown): value is T =>
    list.includes(value as T);

/** Characters as people count them (code points), for the 350-character messages. */
function messageLength(text: string): number {
  return [...text].length;
}

const contractType = coded<ContractType>('INVALID_CONTRACT_TYPE', oneOf(CONTRACT_TYPES), { valid_types: CONTRACT_TYPES });
const language = coded<Language>('INVALID_LANGUAGE', oneOf(LANGUAGES), { valid_languages: LANGUAGES });
const weight = coded<QuestionWeight>('INVALID_WEIGHT_VALUE', oneOf(QUESTION_WEIGHTS), { valid_values: QUESTION_WEIGHTS });
const threshold = coded<SelectionThreshold | null>(
  'INVALID_AUTOMATIC_SELECTION_THRESHOLD',
  (v) => v === null || oneOf(SELECTION_THRESHOLDS)(v),
  {
    valid_values: [...SELECTION_THRESHOLDS, null],
  },
);
const voice = coded<string>('INVALID_OVERRIDE_AGENT_ID', (v) => typeof v === 'string' && v.length > 0);
const message = z
  .string()
  .nullable()
  .refine((v) => v === null || messageLength(v) <= LIMITS.maxMessageLength, {
    message: `A message is longer than ${LIMITS.maxMessageLength} characters.`,
    params: { code: 'MESSAGE_TOO_LONG', details: { max_length: LIMITS.maxMessageLength } },
  });
const text = z.string().regex(/\S/, 'must not be empty');
const question = z.string().regex(/\S/, 'a question must not be empty');
const salaryQuestion = z.enum(SALARY_QUESTION_FORMATS, {
  error: `must be one of ${SALARY_QUESTION_FORMATS.join(', ')} (the declared type is this string enumeration, not a boolean)`,
});
const testMode = z.enum(LANGUAGE_TEST_MODES, { error: `must be one of ${LANGUAGE_TEST_MODES.join(', ')}` });
const notSent = (why: string) => z.never({ error: why }).optional();

/** What the question rules need to know of a campaign that exists already. */
export interface CampaignFacts {
  /** How many questions the campaign has (supplied or generated). */
  questionCount: number;
  /** Its language test. */
  languageTestMode: LanguageTestMode;
}

/** A new campaign: its questions are generated (6) and it has no language test. */
const NEW_CAMPAIGN: CampaignFacts = { questionCount: LIMITS.generatedQuestions, languageTestMode: 'none' };

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const given = (v: unknown) => v !== undefined && v !== null;

/**
 * Rules 1, 2, 3, 5 and 9 of "Create a campaign" and their modify counterparts: they span
 * fields, and compare a change with the campaign it changes. Defensive: they also run on
 * bodies whose fields have the wrong types (zod then reports those on their own).
 */
function questionRuleIssues(body: Record<string, unknown>, current: CampaignFacts | undefined) {
  const issues: Array<ReturnType<typeof codedIssue>> = [];
  const { questions, question_weights: weights, question_binary_evaluations: binary } = body;
  if (Array.isArray(questions)) {
    if (questions.length > LIMITS.maxQuestions) {
      issues.push(codedIssue('TOO_MANY_QUESTIONS', ['questions'], { max: LIMITS.maxQuestions, received: questions.length }));
    }
    if (!given(weights)) issues.push(codedIssue('MISSING_QUESTION_WEIGHTS', ['question_weights']));
  }
  const count = Array.isArray(questions) ? questions.length : current?.questionCount;
  if (count !== undefined && Array.isArray(weights) && weights.length !== count) {
    issues.push(codedIssue('WEIGHTS_MISMATCH', ['question_weights'], { questions: count, question_weights: weights.length }));
  }
  if (count !== undefined && Array.isArray(binary) && binary.length !== count) {
    issues.push(
      codedIssue('BINARY_EVALUATIONS_MISMATCH', ['question_binary_evaluations'], {
        questions: count,
        question_binary_evaluations: binary.length,
      }),
    );
  }
  const customQuestion = body.custom_language_question;
  const mode = body.language_test_mode ?? current?.languageTestMode;
  if (typeof customQuestion === 'string' && customQuestion !== '' && (mode === undefined || mode === 'none')) {
    issues.push(
      codedIssue('CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE', ['custom_language_question'], { language_test_mode: mode ?? null }),
    );
  }
  return issues;
}

// The optional fields, shared by create and modify (modify also accepts null where it clears).
const optionalFields = {
  additional_info: z.string().nullable().optional(),
  client_name: z.string().nullable().optional(),
  language: language.optional(),
  questions: z.array(question).optional(),
  question_weights: z.array(weight).optional(),
  question_binary_evaluations: z.array(z.boolean()).optional(),
  override_agent_id: voice.optional(),
  is_voice_clone: notSent('is derived by the service from override_agent_id; do not send it'),
  enable_salary_question: salaryQuestion.optional(),
  enable_job_search_question: z.boolean().optional(),
  enable_availability_question: z.boolean().optional(),
  enable_introduction_question: z.boolean().optional(),
  enable_engage: z.boolean().optional(),
  engage_message: message.optional(),
  enable_recapInterview: z.boolean().optional(),
  enable_recapJob: z.boolean().optional(),
  recap_job_message: message.optional(),
  enable_close: z.boolean().optional(),
  close_message: message.optional(),
  automatic_selection_threshold: threshold.optional(),
  language_test_mode: testMode.optional(),
  custom_language_question: z.string().nullable().optional(),
};

/** Which code a create request gets when it breaks several rules: rule 10 first, then 1 to 9. */
export const CREATE_CAMPAIGN_RULES: readonly ErrorCode[] = [
  'MISSING_REQUIRED_FIELDS',
  'INVALID_CONTRACT_TYPE',
  'INVALID_LANGUAGE',
  'TOO_MANY_QUESTIONS',
  'MISSING_QUESTION_WEIGHTS',
  'WEIGHTS_MISMATCH',
  'INVALID_WEIGHT_VALUE',
  'BINARY_EVALUATIONS_MISMATCH',
  'INVALID_AUTOMATIC_SELECTION_THRESHOLD',
  'MESSAGE_TOO_LONG',
  'INVALID_OVERRIDE_AGENT_ID',
  'CUSTOM_LANGUAGE_QUESTION_REQUIRES_TEST_MODE',
];

/**
 * The body of `POST /campaigns/create`. Every rule that needs no state is here; the two that
 * do (the voice exists and is the agency's, rule 8; credits remain, rule 11) are the server's.
 * Unknown fields are dropped.
 */
export const createCampaignRequestSchema = z
  .object({
    job_title: text,
    contract_type: contractType,
    job_description: text,
    ...optionalFields,
  })
  .check(
    z.superRefine(
      (value, ctx) => {
        if (!isRecord(value)) return;
        const missing = REQUIRED_CAMPAIGN_FIELDS.filter((f) => !given(value[f]) || (typeof value[f] === 'string' && !/\S/.test(value[f])));
        if (missing.length > 0) ctx.addIssue(codedIssue('MISSING_REQUIRED_FIELDS', [], { missing_fields: missing }));
        for (const issue of questionRuleIssues(value, NEW_CAMPAIGN)) ctx.addIssue(issue);
      },
      { when: () => true },
    ),
  );

/** The body of `createCampaign`, as a caller writes it. */
export type CreateCampaignRequest = z.input<typeof createCampaignRequestSchema>;

/** Which code a modify request gets when it breaks several rules. */
export const MODIFY_CAMPAIGN_RULES: readonly ErrorCode[] = CREATE_CAMPAIGN_RULES.filter((code) => code !== 'MISSING_REQUIRED_FIELDS');

/**
 * The body of `PATCH /campaigns/{campaign_id}`: any subset of the campaign fields. Given the
 * campaign's current facts, the question rules also compare lone weights or binary evaluations
 * with its question count, and a custom language question with its current test mode.
 */
export function modifyCampaignRequestSchema(current?: CampaignFacts) {
  return z
    .object({
      job_title: text.optional(),
      contract_type: contractType.optional(),
      job_description: text.optional(),
      ...optionalFields,
      override_agent_id: voice.nullable().optional(),
      status: notSent('change the status with PATCH /api/v1/campaigns/{campaign_id}/status'),
    })
    .check(
      z.superRefine(
        (value, ctx) => {
          if (!isRecord(value)) return;
          for (const issue of questionRuleIssues(value, current)) ctx.addIssue(issue);
        },
        { when: () => true },
      ),
    );
}

/** The body of `modifyCampaign`: any subset of the campaign's fields. */
export type ModifyCampaignRequest = z.input<ReturnType<typeof modifyCampaignRequestSchema>>;

/** 201 answer of `POST /campaigns/create`. */
export const createCampaignResponseSchema = z.object({
  campaign_id: z.string(),
  candidate_link: z.url(),
  status: z.literal('active'),
  questions_generated: z.int().min(0),
  questions_source: z.enum(QUESTIONS_SOURCES),
});
/** The answer of `createCampaign`. */
export type CreateCampaignResponse = z.infer<typeof createCampaignResponseSchema>;

/** 200 answer of `PATCH /campaigns/{campaign_id}`. */
export const modifyCampaignResponseSchema = z.object({ campaign_id: z.string(), updated_at: z.iso.datetime() });
/** The answer of `modifyCampaign`. */
export type ModifyCampaignResponse = z.infer<typeof modifyCampaignResponseSchema>;

/** Body of `PATCH /campaigns/{campaign_id}/status` (not shown in the document: the sandbox's choice). */
export const changeStatusRequestSchema = z.object({
  status: z.enum(CAMPAIGN_STATUSES, { error: `must be one of ${CAMPAIGN_STATUSES.join(', ')}` }),
});

/** 200 answer of `PATCH /campaigns/{campaign_id}/status`, named like `campaign.status_changed`. */
export const changeStatusResponseSchema = z.object({
  campaign_id: z.string(),
  old_status: z.enum(CAMPAIGN_STATUSES),
  new_status: z.enum(CAMPAIGN_STATUSES),
  updated_at: z.iso.datetime(),
});
/** The answer of `changeCampaignStatus`. */
export type ChangeStatusResponse = z.infer<typeof changeStatusResponseSchema>;

/** The `stats` object of `GET /campaigns/{campaign_id}/status`. */
const campaignStatsSchema = z.object({
  total_candidates: z.int().min(0),
  interviews_completed: z.int().min(0),
  /** Mean score of the completed interviews; null when there are none. */
  average_score: z.number().nullable(),
});
export type CampaignStats = z.infer<typeof campaignStatsSchema>;

/** 200 answer of `GET /campaigns/{campaign_id}/status` (only `stats` is documented). */
export const campaignStatusResponseSchema = z.object({
  campaign_id: z.string(),
  job_title: z.string(),
  status: z.enum(CAMPAIGN_STATUSES),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  stats: campaignStatsSchema,
});
/** The answer of `getCampaignStatus`: a campaign's status and stats. */
export type CampaignStatusResponse = z.infer<typeof campaignStatusResponseSchema>;

/** A campaign as `GET /campaigns/{campaign_id}` returns it (the record is not shown: the sandbox's choice). */
export const campaignRecordSchema = z.object({
  campaign_id: z.string(),
  candidate_link: z.url(),
  status: z.enum(CAMPAIGN_STATUSES),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  job_title: z.string(),
  contract_type: z.enum(CONTRACT_TYPES),
  job_description: z.string(),
  additional_info: z.string().nullable(),
  client_name: z.string(),
  language: z.enum(LANGUAGES),
  questions: z.array(z.string()),
  question_weights: z.array(z.number()),
  question_binary_evaluations: z.array(z.boolean()).nullable(),
  questions_source: z.enum(QUESTIONS_SOURCES),
  override_agent_id: z.string(),
  is_voice_clone: z.boolean(),
  enable_salary_question: z.enum(SALARY_QUESTION_FORMATS),
  enable_job_search_question: z.boolean(),
  enable_availability_question: z.boolean(),
  enable_introduction_question: z.boolean(),
  enable_engage: z.boolean(),
  engage_message: z.string().nullable(),
  enable_recapInterview: z.boolean(),
  enable_recapJob: z.boolean(),
  recap_job_message: z.string().nullable(),
  enable_close: z.boolean(),
  close_message: z.string().nullable(),
  automatic_selection_threshold: z.number().nullable(),
  language_test_mode: z.enum(LANGUAGE_TEST_MODES),
  custom_language_question: z.string().nullable(),
  stats: campaignStatsSchema,
});
/** The answer of `getCampaign`: every field of a campaign. */
export type CampaignRecord = z.infer<typeof campaignRecordSchema>;

/** Query of `GET /campaigns` (the list is referred to, not shown: the sandbox's choice). */
export const listCampaignsQuerySchema = z.object({
  ...pageQuery,
  status: z.enum(CAMPAIGN_STATUSES, { error: `must be one of ${CAMPAIGN_STATUSES.join(', ')}` }).optional(),
});
/** The query of `listCampaigns`: the page, its size, a status filter. */
export type ListCampaignsQuery = z.input<typeof listCampaignsQuerySchema>;

/** 200 answer of `GET /campaigns`: the agency's campaigns, newest first, each as its status answer. */
export const listCampaignsResponseSchema = z.object({
  campaigns: z.array(campaignStatusResponseSchema),
  pagination: paginationSchema,
});
/** The answer of `listCampaigns`: one page of campaigns. */
export type ListCampaignsResponse = z.infer<typeof listCampaignsResponseSchema>;
