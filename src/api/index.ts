// The service's REST contract, once (its operations: docs/client.md; its rules: docs/sandbox.md):
// request and response schemas, query parameters, the error codes, the API key format, the phone
// rules and the limits. No I/O: the sandbox (src/sandbox) and the typed client both import from
// here. Webhook payloads are not here: they are src/events.
export * from './errors.js';
export * from './limits.js';
export * from './rules.js';
export * from './auth.js';
export * from './phone.js';
export * from './endpoints.js';
export * from './pagination.js';
export * from './campaigns.js';
export * from './candidates.js';
export * from './voices.js';
export * from './credits.js';
