// The public API of prequal-hooks, and nothing else.
export * from './events/index.js';
export { sign, verify, secretFingerprint, type Secret, type RawBody, type Verification } from './signature.js';
