import { LIMITS } from '../api/index.js';

export interface ThrottleOptions {
  /** Requests per minute (default the service's 60). */
  perMinute?: number;
  /** Requests per hour (default the service's 1,000). */
  perHour?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Spaces requests so that no sliding minute holds more than `perMinute` of them and no sliding
 * hour more than `perHour`: one per client, shared by all its calls, so that concurrent calls
 * queue instead of earning 429s.
 */
export function createThrottle(options: ThrottleOptions = {}) {
  const perMinute = options.perMinute ?? LIMITS.requestsPerMinute;
  const perHour = options.perHour ?? LIMITS.requestsPerHour;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const sent: number[] = []; // start times within the last hour, oldest first
  let queue: Promise<void> = Promise.resolve();

  async function take(): Promise<void> {
    for (;;) {
      const t = now();
      while (sent.length > 0 && sent[0]! <= t - 3_600_000) sent.shift();
      const lastMinute = sent.filter((s) => s > t - 60_000);
      const waitMinute = lastMinute.length >= perMinute ? lastMinute[lastMinute.length - perMinute]! + 60_000 - t : 0;
      const waitHour = sent.length >= perHour ? sent[sent.length - perHour]! + 3_600_000 - t : 0;
      const wait = Math.max(waitMinute, waitHour);
      if (wait <= 0) {
        sent.push(t);
        return;
      }
      await sleep(wait);
    }
  }

  return {
    /** Resolves when a request may start (in call order). */
    acquire(): Promise<void> {
      const turn = queue.then(take);
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
