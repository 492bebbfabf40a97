export * from './schemas.js';
export * from './timestamp.js';
export * from './identity.js';
export type { Issue } from './issue.js';
export * from './parse.js';
export * from './order.js';
export { parseJson } from './json.js';
export * from './redact.js';
export * from './naming.js';
