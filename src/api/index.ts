// The service's REST contract, once: schemas, error codes, limits. No I/O. The sandbox and the
// typed client both import from here.
export * from './errors.js';
export * from './limits.js';
