/** The header every request carries its API key in. */
export const API_KEY_HEADER = 'X-API-Key';

/**
 * The key format of the service's authentication (docs/sandbox.md, "The API"): a fixed prefix
 * ending in `live_`, then 32 or more random characters. The prefix itself is not shown, so any run of letters, digits and
 * underscores is accepted before `live_`; 256 characters in all at most.
 */
const API_KEY_PATTERN = /^[A-Za-z0-9_]*live_[A-Za-z0-9_-]{32,}$/;
const API_KEY_MAX_LENGTH = 256;

/** True when a value has the documented key format (it may still be unrecognised). */
export function isApiKeyFormat(value: unknown): value is string {
  return typeof value === 'string' && value.length <= API_KEY_MAX_LENGTH && API_KEY_PATTERN.test(value);
}
