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
