import { z } from 'zod';
import { parseInstant } from './timestamp.js';

// Field by field from the service's Events table. Identifiers and the fields that define a kind
// are required; descriptive text may be null or absent (the service sends what it has); fields
// the service adds later are kept (loose objects), never rejected.

const id = z.string().min(1);
const text = z.string().nullish();
const flag = z.boolean().nullish();

/** The statuses a campaign can have. */
export const CAMPAIGN_STATUSES = ['active', 'paused', 'completed'] as const;
/** The statuses a candidate can have. */
export const CANDIDATE_STATUSES = ['pending', 'completed', 'voicemail', 'incomplete'] as const;
/** Why an interview failed (`candidate.interview.failed`). */
export const FAILURE_REASONS = ['voicemail', 'no_answer', 'user_hangup', 'technical_error'] as const;

const campaignStatus = z.enum(CAMPAIGN_STATUSES);
const score = z.number().min(0).max(10);

/** The message of a timestamp that `timestampSchema` refuses. */
export const TIMESTAMP_MESSAGE = 'must be ISO 8601 with seconds and a zone (Z or ±hh:mm), e.g. 2026-11-20T10:00:00Z';
/** An ISO 8601 timestamp with seconds and a zone, as events carry. */
export const timestampSchema = z.string().refine((value) => parseInstant(value) !== null, { message: TIMESTAMP_MESSAGE });

const candidateNames = {
  campaign_id: id,
  candidate_id: id,
  first_name: text,
  last_name: text,
};

/** The ten kinds the service sends (docs/events.md, "The ten kinds the service sends"). */
export const serviceDataSchemas = {
  'campaign.created': z.looseObject({
    campaign_id: id,
    job_title: text,
    contract_type: text,
    candidate_link: text,
    questions_count: z.int().min(0).nullish(),
    status: campaignStatus,
  }),
  'campaign.status_changed': z.looseObject({
    campaign_id: id,
    job_title: text,
    old_status: campaignStatus.nullish(),
    new_status: campaignStatus,
  }),
  'candidate.added': z.looseObject({
    ...candidateNames,
    email: text,
    phone: text,
    call_queued: flag,
  }),
  'candidate.sourced': z.looseObject({
    ...candidateNames,
    phone: text,
    sms_sent: flag,
  }),
  'candidate.interview.started': z.looseObject({
    ...candidateNames,
  }),
  'candidate.interview.failed': z.looseObject({
    ...candidateNames,
    failure_reason: z.enum(FAILURE_REASONS),
  }),
  'candidate.interview.completed': z.looseObject(completedFields()),
  'candidate.interview.completed.extended': z.looseObject({
    ...completedFields(),
    responses: z.array(
      z.looseObject({
        question: text,
        answer: text,
        score: score.nullish(),
        explanation: text,
      }),
    ),
  }),
  'credits.low': z.looseObject({
    credits_remaining: z.number(),
    threshold: z.number(),
  }),
  'credits.depleted': z.looseObject({
    credits_remaining: z.number(),
    last_campaign_id: text,
  }),
} as const satisfies Record<ServiceEventKind, z.ZodType>;

// What reconciliation read from the service's API and found different from the projection
// (src/reconcile/). Stamped with the time of the reading, they are ordered against webhooks by
// the same last-writer-wins rule: an older webhook does not undo them, a newer one wins. Each
// carries only the fields that differed, besides its keys.
const readTimestamp = z.string().refine((value) => parseInstant(value) !== null, { message: TIMESTAMP_MESSAGE });
/** The `data` of each kind reconciliation writes, by kind. */
export const reconcileDataSchemas = {
  'reconcile.campaign': z.looseObject({
    campaign_id: id,
    job_title: text,
    status: campaignStatus.nullish(),
    created_at: readTimestamp.nullish(),
  }),
  'reconcile.candidate': z.looseObject({
    campaign_id: id,
    candidate_id: id,
    first_name: text,
    last_name: text,
    email: text,
    phone: text,
    status: z.enum(CANDIDATE_STATUSES).nullish(),
    interview_score: score.nullish(),
    interview_date: readTimestamp.nullish(),
    availability: text,
    salary_expectation: text,
    candidate_alignment: text,
    strengths: text,
    concerns: text,
    is_sourced: z.boolean().optional(),
    failure_reason: z.enum(FAILURE_REASONS).nullish(),
  }),
  'reconcile.credits': z.looseObject({
    credits_remaining: z.number(),
  }),
} as const satisfies Record<ReconcileKind, z.ZodType>;

/** The `data` of every kind this version projects, by kind. */
export const dataSchemas = { ...serviceDataSchemas, ...reconcileDataSchemas } as const;

function completedFields() {
  return {
    ...candidateNames,
    email: text,
    phone: text,
    interview_score: score,
    availability: text,
    availability_start: text,
    salary_expectation: text,
    candidate_alignment: text,
    strengths: text,
    concerns: text,
  };
}

/** Every kind this version projects: the service's ten, and reconciliation's own. */
export type EventKind = ServiceEventKind | ReconcileKind;
/** A kind the service sends (`serviceDataSchemas` has exactly these). */
export type ServiceEventKind =
  | 'campaign.created'
  | 'campaign.status_changed'
  | 'candidate.added'
  | 'candidate.sourced'
  | 'candidate.interview.started'
  | 'candidate.interview.failed'
  | 'candidate.interview.completed'
  | 'candidate.interview.completed.extended'
  | 'credits.low'
  | 'credits.depleted';
/** A kind reconciliation writes, never sent by the service (`reconcileDataSchemas` has exactly these). */
export type ReconcileKind = 'reconcile.campaign' | 'reconcile.candidate' | 'reconcile.credits';
/** The ten kinds the service sends. */
export const EVENT_KINDS = Object.keys(serviceDataSchemas) as ServiceEventKind[];
/** The kinds reconciliation writes into the inbox. */
export const RECONCILE_KINDS = Object.keys(reconcileDataSchemas) as ReconcileKind[];

/** docs/projection.md section 2: the tie-break between events of the same instant. */
export const KIND_RANKS: Readonly<Record<EventKind, number>> = {
  'campaign.created': 0,
  'campaign.status_changed': 1,
  'candidate.added': 2,
  'candidate.sourced': 3,
  'candidate.interview.started': 4,
  'candidate.interview.failed': 5,
  'candidate.interview.completed': 6,
  'candidate.interview.completed.extended': 7,
  'credits.low': 8,
  'credits.depleted': 9,
  'reconcile.campaign': 10,
  'reconcile.candidate': 11,
  'reconcile.credits': 12,
};

/** Which row an event is about: docs/projection.md's tables, by kind. */
export const KIND_SUBJECTS = {
  'campaign.created': 'campaign',
  'campaign.status_changed': 'campaign',
  'candidate.added': 'candidate',
  'candidate.sourced': 'candidate',
  'candidate.interview.started': 'candidate',
  'candidate.interview.failed': 'candidate',
  'candidate.interview.completed': 'candidate',
  'candidate.interview.completed.extended': 'candidate',
  'credits.low': 'credits',
  'credits.depleted': 'credits',
  'reconcile.campaign': 'campaign',
  'reconcile.candidate': 'candidate',
  'reconcile.credits': 'credits',
} as const satisfies Record<EventKind, 'campaign' | 'candidate' | 'credits'>;

/** A kind this version projects (the service's, or reconciliation's). */
export function isEventKind(kind: string): kind is EventKind {
  return Object.hasOwn(dataSchemas, kind);
}

/** A kind the service sends. */
export function isServiceEventKind(kind: string): kind is ServiceEventKind {
  return Object.hasOwn(serviceDataSchemas, kind);
}

/** The envelope every delivery must be: a JSON object with a string event and timestamp and an object data. */
export interface Envelope {
  /** The kind, as sent (known or not). */
  event: string;
  /** When it happened, as sent. */
  timestamp: string;
  /** The kind's fields. */
  data: Record<string, unknown>;
  /** Any other field, kept as sent. */
  [field: string]: unknown;
}

function eventSchema<K extends EventKind>(kind: K) {
  return z.looseObject({
    event: z.literal(kind),
    timestamp: timestampSchema,
    data: dataSchemas[kind],
  });
}

/** A whole event of a known kind: `event`, `timestamp` and its kind's `data`; unknown fields are kept. */
export const webhookEventSchema = z.discriminatedUnion('event', [
  eventSchema('campaign.created'),
  eventSchema('campaign.status_changed'),
  eventSchema('candidate.added'),
  eventSchema('candidate.sourced'),
  eventSchema('candidate.interview.started'),
  eventSchema('candidate.interview.failed'),
  eventSchema('candidate.interview.completed'),
  eventSchema('candidate.interview.completed.extended'),
  eventSchema('credits.low'),
  eventSchema('credits.depleted'),
  eventSchema('reconcile.campaign'),
  eventSchema('reconcile.candidate'),
  eventSchema('reconcile.credits'),
]);

/** Any event this version projects, discriminated by `event`. */
export type WebhookEvent = z.infer<typeof webhookEventSchema>;
/** The event of one kind, e.g. `EventOf<'candidate.interview.completed'>`. */
export type EventOf<K extends EventKind> = Extract<WebhookEvent, { event: K }>;
/** The `data` of one kind. */
export type DataOf<K extends EventKind> = EventOf<K>['data'];
