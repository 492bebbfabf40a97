// Spaces a client's requests to stay within the service's per-key limits (60 a minute and
// 1,000 an hour, sliding windows), so that the 429 is the exception, not the pacing.
import { LIMITS } from '../api/index.js';

/** Where time comes from; tests pass a virtual one so that no test waits a real minute. */
export interface Clock {
  /** The time, in Unix ms. */
  now(): number;
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
}

/** The real clock: `Date.now` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The limits a throttle keeps to. */
export interface ThrottleOptions {
  /** Default 60 (`LIMITS`, src/api/limits.ts; docs/client.md, "Throttle"). */
  perMinute?: number;
  /** Default 1000. */
  perHour?: number;
  /** Where time comes from. Default `systemClock`. */
  clock?: Clock;
}

/** Spaces requests to stay within per-key limits; one throttle may be shared by the clients of one key. */
export interface Throttle {
  /** Resolves when one more request may be sent, and counts it as sent then. First come, first served. */
  acquire(): Promise<void>;
  /** No request before `ms` from now (a 429's `retry_after` holds back every call of the client). */
  pause(ms: number): void;
  /** Requests counted in the last hour. */
  sentInLastHour(): number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

function positiveWhole(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number from 1, got ${value}`);
  return value;
}

/** A throttle of `perMinute` and `perHour` requests in sliding windows. Throws RangeError for a limit that is not a whole number from 1. */
export function createThrottle(options: ThrottleOptions = {}): Throttle {
  const perMinute = positiveWhole('perMinute', options.perMinute ?? LIMITS.requestsPerMinute);
  const perHour = positiveWhole('perHour', options.perHour ?? LIMITS.requestsPerHour);
  const clock = options.clock ?? systemClock;
  // Send times, oldest first; only the last `perHour` within the hour matter.
  const sent: number[] = [];
  let pausedUntil = 0;
  let tail: Promise<void> = Promise.resolve();

  function prune(now: number) {
    while (sent.length > 0 && (sent[0]! <= now - HOUR || sent.length > perHour)) sent.shift();
  }

  /** The earliest time the next request keeps both windows under their limits. */
  function nextSlot(now: number): number {
    prune(now);
    let at = Math.max(now, pausedUntil);
    if (sent.length >= perMinute) at = Math.max(at, sent[sent.length - perMinute]! + MINUTE);
    if (sent.length >= perHour) at = Math.max(at, sent[sent.length - perHour]! + HOUR);
    return at;
  }

  return {
    acquire() {
      // Chained, so that concurrent calls take the slots in order and none is given twice.
      const turn = tail.then(async () => {
        const now = clock.now();
        const at = nextSlot(now);
        if (at > now) await clock.sleep(at - now);
        sent.push(Math.max(clock.now(), at));
      });
      tail = turn.catch(() => {});
      return turn;
    },
    pause(ms) {
      pausedUntil = Math.max(pausedUntil, clock.now() + ms);
    },
    sentInLastHour() {
      prune(clock.now());
      return sent.length;
    },
  };
}
