// Who is calling (X-API-Key, one agency per key) and whether they may call again yet.
import { API_KEY_HEADER, isApiKeyFormat, LIMITS } from '../api/index.js';
import type { Clock } from './clock.js';
import { errorReply, type Reply } from './errors.js';
import type { Agency } from './state.js';

export type Authentication = { ok: true; agency: Agency } | { ok: false; reply: Reply };

/**
 * The four 401s of the service's authentication (docs/sandbox.md, "The API"; their codes in
 * ERROR_CODES, src/api/errors.ts), in the order a key is looked at.
 */
export function authenticate(header: string | string[] | undefined, agencies: ReadonlyMap<string, Agency>): Authentication {
  const details = { header: API_KEY_HEADER };
  if (header === undefined || header === '') return { ok: false, reply: errorReply('MISSING_API_KEY', details) };
  // A repeated header (an array, or joined with ", ") is no key of the documented format.
  if (!isApiKeyFormat(header)) return { ok: false, reply: errorReply('INVALID_API_KEY_FORMAT', details) };
  const agency = agencies.get(header);
  if (agency === undefined) return { ok: false, reply: errorReply('INVALID_API_KEY') };
  if (!agency.active) return { ok: false, reply: errorReply('AGENCY_INACTIVE', { agency_id: agency.id }) };
  return { ok: true, agency };
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/**
 * 60 requests a minute and 1,000 an hour per key, over sliding windows. A refused request is
 * not counted; `retry_after` is the whole seconds until the oldest request leaves the window.
 */
export function createRateLimiter(clock: Clock, perMinute: number = LIMITS.requestsPerMinute, perHour: number = LIMITS.requestsPerHour) {
  const seen = new Map<string, number[]>();
  return {
    admit(key: string): { ok: true } | { ok: false; reply: Reply } {
      const now = clock.now();
      const times = (seen.get(key) ?? []).filter((t) => t > now - HOUR);
      seen.set(key, times);
      const lastMinute = times.filter((t) => t > now - MINUTE);
      const full =
        lastMinute.length >= perMinute
          ? lastMinute[lastMinute.length - perMinute]! + MINUTE
          : times.length >= perHour
            ? times[times.length - perHour]! + HOUR
            : undefined;
      if (full !== undefined) {
        const retryAfter = Math.max(1, Math.ceil((full - now) / 1000));
        const window = lastMinute.length >= perMinute ? 'minute' : 'hour';
        return {
          ok: false,
          reply: errorReply(
            'RATE_LIMIT_EXCEEDED',
            { retry_after: retryAfter, limit: window === 'minute' ? perMinute : perHour, window },
            `Too many requests for this API key: at most ${window === 'minute' ? `${perMinute} a minute` : `${perHour} an hour`}. Retry in ${retryAfter} s.`,
            { 'retry-after': String(retryAfter) },
          ),
        };
      }
      times.push(now);
      return { ok: true };
    },
  };
}
