export * from './schemas.js';
export * from './timestamp.js';
export * from './identity.js';
export * from './parse.js';
export * from './order.js';
export { parseJson } from './json.js';
