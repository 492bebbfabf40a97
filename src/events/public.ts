// The `prequal-hooks/events` entry point: the service's ten kinds (and the three reconciliation
// kinds) as schemas and types, the reading of a body, an event's identity, timestamps as the
// projection compares them, and what an erased body holds. What the root entry needs of these, it
// exports too.
export {
  CAMPAIGN_STATUSES,
  CANDIDATE_STATUSES,
  FAILURE_REASONS,
  EVENT_KINDS,
  RECONCILE_KINDS,
  isEventKind,
  isServiceEventKind,
  webhookEventSchema,
  dataSchemas,
  serviceDataSchemas,
  reconcileDataSchemas,
  timestampSchema,
  type EventKind,
  type ServiceEventKind,
  type ReconcileKind,
  type Envelope,
  type WebhookEvent,
  type EventOf,
  type DataOf,
} from './schemas.js';
export { parseEvent, readEnvelope, type EventReading, type EnvelopeReading } from './parse.js';
export type { Issue } from './issue.js';
export { eventIdentity, rawIdentity, canonicalJson, UnrepresentableJsonError, type EnvelopeFields } from './identity.js';
export { parseInstant, formatInstant } from './timestamp.js';
export { REDACTED_MARKER, REDACTED_REASONS, redactedBody } from './redact.js';
