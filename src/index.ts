// The public API of prequal-hooks, and nothing else.
import type { StoreHandle } from './store/handle.js';
import { openStore as openEngine, type DatabaseOption, type StoreOptions } from './store/open.js';
import { createIntake as createEngineIntake, type IntakeOptions, type RequestIntake } from './receive/intake.js';

// The ten kinds as the handlers and parseEvent name them; the rest of the events' toolkit (schemas
// per kind, identities, timestamps, redaction) is `prequal-hooks/events`.
export {
  parseEvent,
  isEventKind,
  EVENT_KINDS,
  webhookEventSchema,
  type EventKind,
  type ServiceEventKind,
  type ReconcileKind,
  type Envelope,
  type WebhookEvent,
  type EventOf,
  type DataOf,
  type EventReading,
  type EnvelopeReading,
} from './events/index.js';
export type { Issue } from './events/issue.js';
export { sign, verify, secretFingerprint, type Secret, type RawBody, type Verification } from './signature.js';
export { createReceiver, type Receiver, type ReceiverOptions } from './receiver/create-receiver.js';
export type { DestinationsOptions, ReconcileEvery } from './receiver/options.js';
export type { NetworkRules } from './destinations/network-policy.js';
export type { AccountReceiver } from './receiver/api.js';
export type { DashboardOptions } from './console/dashboard.js';
export type { FeedOptions } from './receiver/feed-router.js';
export type { ResultListener } from './receive/node-http.js';
export type { IntakeRates } from './receive/budget.js';
export type { AdmissionRules } from './receive/admission.js';
export type { ConnectionScreen } from './receive/connection-screen.js';
export { ConfigurationError } from './errors.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_SIGNATURE_HEADER, DEFAULT_EVENT_HEADER } from './receive/intake.js';
export type { IntakeOptions, IntakeResult, IncomingRequest, RequestIntake } from './receive/intake.js';
export type { IncomingHeaders } from './receive/headers.js';
export type { Answer } from './receive/answer.js';
export type { Delivery, DeliveryVerdict, StoreDelivery, StoreOutcome } from './receive/delivery.js';
export type { AccountRoutes, RoutedAccount } from './receive/account.js';
export type { SqliteDatabase } from './store/sqlite/database.js';
export { DatabaseTooNewError } from './store/migrations.js';
export type { DatabaseOption, StoreOptions, PostgresPool } from './store/open.js';
export type { StoreHandle } from './store/handle.js';
export { StoreUnavailableError } from './store/errors.js';
export type { InboxRow, HandlerFailureRow, ReadinessProbe } from './store/rows.js';
export type { InboxState } from './store/inbox-state.js';
export type { Handler, AnyHandler, HandlerContext, RowOf } from './dispatch/handlers.js';
export { HandlerTimeoutError, type DispatcherOptions } from './dispatch/dispatcher.js';
export type { DeadLetter, DeadLetters, EventDeadLetter, HandlerDeadLetter } from './dispatch/dead-letters.js';
export type { CampaignRow, CandidateRow, CreditsRow, InterviewResponse } from './tables/rows.js';
export {
  createQueries,
  QueryParameterError,
  type Queries,
  type CampaignWithStats,
  type CampaignPage,
  type CampaignPageParameters,
  type CampaignStats,
  type CandidatePage,
  type CandidateListParameters,
  readChanges,
  followChanges,
  ChangesDroppedError,
  CursorAheadError,
  type Change,
  type ChangeFields,
  type CampaignChange,
  type CandidateChange,
  type CreditsChange,
  type CampaignChangeRow,
  type CandidateChangeRow,
  type RedactedCandidateRow,
  type CreditsChangeRow,
  type ChangePage,
  type ChangePageParameters,
  type FollowChangesOptions,
} from './query/index.js';
export {
  replay,
  rebuild,
  ReplayInputError,
  type ReplayInput,
  type ReplayOptions,
  type ReplaySummary,
  type RebuildOptions,
  type RebuildSummary,
} from './replay/index.js';
export { createLogger, type Logger } from './logging.js';
export {
  reconcileInto,
  type ReconcileTarget,
  type ReconcileOptions,
  type ReconcileClient,
  type Fields,
  type FieldDifference,
  type ReconcileReport,
  type Repair,
  type CampaignReport,
} from './reconcile/index.js';
export {
  eraseCandidate,
  eraseInactive,
  exportCandidate,
  ErasureRequestError,
  UnknownCandidateError,
  type CandidateExport,
  type EraseOptions,
  type ErasureReport,
  type StoredEventExport,
  type RetentionOptions,
  type RetentionReport,
  type EraseHook,
  type EraseHookContext,
  type ErasedCandidate,
} from './privacy/index.js';
export type { ErasureRecord, ExportedResponse } from './store/ports/people.js';
// The service's answers that reconciliation reads (types only: prequal-hooks/client has the client).
export type {
  CampaignStatusResponse,
  CandidateRecord,
  CreditsResponse,
  ListCandidatesQuery,
  Pagination,
  campaignStatusResponseSchema,
  candidateRecordSchema,
  creditsResponseSchema,
  listCandidatesQuerySchema,
  paginationSchema,
} from './api/index.js';
export type { CandidateMatch } from './store/rows.js';
export {
  openAccounts,
  watchAccounts,
  AccountsKeyError,
  AccountRequestError,
  UnknownAccountError,
  type Accounts,
  type AccountsOptions,
  type AccountSummary,
  type AddAccount,
  type AddedAccount,
  type RotatedSecret,
  type RemovedAccount,
  type Rekeyed,
  type AccountRoutesSnapshot,
  type WatchOptions,
  type RoutesSource,
} from './accounts/index.js';

/**
 * Opens the engine the option names, migrated and ready: a SQLite path (created with its folder),
 * `:memory:`, an open better-sqlite3 database, a PostgreSQL URL or pool. Close it when done.
 */
export const openStore: (database: DatabaseOption, options?: StoreOptions) => Promise<StoreHandle> = openEngine;

/**
 * The framework-free core of a receiver: raw bytes and headers in, a delivery stored with
 * `options.store` and an answer out. Throws ConfigurationError when no secret is given and
 * `allowUnsigned` is not set. `createReceiver` builds one; use this to bring your own storage.
 */
export const createIntake: (options: IntakeOptions) => RequestIntake = createEngineIntake;
