// prequal-hooks/client: a typed client of the service's REST API (src/api is its contract).
export { createClient, type Client, type ClientOptions } from './client.js';
export { PrequalApiError, PrequalNetworkError, type RequestInfo } from './errors.js';
export { createThrottle, type Throttle, type ThrottleOptions } from './throttle.js';
export type * from '../api/index.js';
