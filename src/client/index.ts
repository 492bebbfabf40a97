// prequal-hooks/client: the service's REST API, typed by src/api, checked before sending,
// throttled to the per-key limits, retried where a retry is safe.
export { createClient, type Client, type ClientOptions, type CandidateWalk, type CampaignWalk } from './client.js';
export {
  PrequalApiError,
  PrequalNetworkError,
  PrequalRedirectError,
  PrequalResponseError,
  type PrequalError,
  type SentRequest,
} from './errors.js';
export { RETRY_DEFAULTS, RETRY_SAFE, backoffDelay, type RetryOptions } from './retry.js';
export { createThrottle, systemClock, type Clock, type Throttle, type ThrottleOptions } from './throttle.js';
export { walkPages, type Page } from './pagination.js';
