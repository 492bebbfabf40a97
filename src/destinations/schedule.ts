// When a failed delivery is tried again (docs/destinations.md): the Standard Webhooks schedule by
// default, each delay with up to a fifth of jitter so that a receiver back from an outage is not
// met by every queued change at once; and the rate a destination is sent at most.
import { DestinationRequestError } from './errors.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/** At once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h: about three days in all. */
export const DEFAULT_SCHEDULE: readonly number[] = [0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H];

const UNITS: Record<string, number> = { ms: 1, s: S, m: M, h: H, d: 24 * H };

/** `0s,100ms,5m,2h`: the delay before each attempt, the first usually 0. */
export function parseSchedule(text: string): number[] {
  const delays = text.split(',').map((part) => {
    const match = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h|d)\s*$/.exec(part);
    if (match === null)
      throw new DestinationRequestError(
        `--retry-schedule must be delays separated by commas, each a number and a unit ms, s, m, h or d (such as 0s,5s,5m,30m), got "${part.trim()}"`,
      );
    return Math.round(Number(match[1]) * UNITS[match[2]!]!);
  });
  if (delays.length > 50) throw new DestinationRequestError('--retry-schedule takes 50 attempts at most');
  return delays;
}

/** The delay before attempt `attempt` (from 0), jittered; undefined once the schedule is spent. */
export function delayBefore(schedule: readonly number[], attempt: number, random: () => number = Math.random): number | undefined {
  const delay = schedule[attempt];
  if (delay === undefined) return undefined;
  return Math.round(delay * (1 + 0.2 * random()));
}

/** `--rate 10/s`: requests per second at most. */
export function parseRate(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(s|m)\s*$/.exec(text);
  const rate = match === null ? NaN : Number(match[1]) / (match[2] === 'm' ? 60 : 1);
  if (!(rate > 0))
    throw new DestinationRequestError(`--rate must be a number of requests per second or minute, such as 10/s or 30/m, got "${text}"`);
  return rate;
}

/** A `Retry-After` header (seconds, or an HTTP date) in ms from `now`, at most a day; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const seconds = /^\s*\d+\s*$/.test(header) ? Number(header) * S : Date.parse(header) - now;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(Math.max(seconds, 0), 24 * H);
}
