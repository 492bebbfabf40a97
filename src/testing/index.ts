// Helpers for users' own tests: signed requests and realistic sample events.
export { signedRequest, sendSigned, type SignedRequest, type SignedRequestOptions } from './signed-request.js';
export { sampleEvent, FIXTURES_DIR } from './samples.js';
export { sign } from '../signature.js';
export {
  startTestPostgres,
  createDatabase,
  findBinaries,
  type PostgresServer,
  type PostgresBinaries,
  type StartOptions as TestPostgresOptions,
} from './postgres.js';
// The types its signatures name, for users who import only this entry point.
export type { Secret, RawBody } from '../signature.js';
export type { EventOf, EventKind, ServiceEventKind, ReconcileKind, WebhookEvent, webhookEventSchema } from '../events/index.js';
