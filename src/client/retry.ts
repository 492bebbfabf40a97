// When a failed attempt is tried again, and after how long.
import type { EndpointName } from '../api/index.js';

/** When a client retries a failed attempt, and how long it waits. */
export interface RetryOptions {
  /** Attempts after the first, for 429, 5xx and network failures together (default 3). */
  maxRetries?: number;
  /** First backoff delay, doubled at each retry (default 500 ms). */
  baseDelayMs?: number;
  /** Largest backoff delay (default 20 s). */
  maxDelayMs?: number;
  /**
   * A 429 whose `retry_after` is longer than this is thrown at once rather than waited for
   * (default 60 s: an hourly quota can ask for up to an hour).
   */
  maxRetryAfterMs?: number;
}

/** The retry options' defaults: 3 retries, 500 ms doubling up to 20 s, a `retry_after` of at most 60 s waited for. */
export const RETRY_DEFAULTS: Required<RetryOptions> = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 };

/**
 * The operations that may be sent again after a 5xx or a lost answer, when the first attempt
 * may have been applied. GET reads; the two PATCHes set fields or a status to given values (the
 * same again changes nothing); adding or sourcing skips a candidate whose phone or e-mail is
 * already in the campaign, so a retry never adds, calls or charges anyone twice. Creating a
 * campaign has no idempotency key: a retry could create a second one, so it is not retried.
 */
export const RETRY_SAFE: Readonly<Record<EndpointName, boolean>> = {
  createCampaign: false,
  listCampaigns: true,
  getCampaign: true,
  modifyCampaign: true,
  changeCampaignStatus: true,
  getCampaignStatus: true,
  addCandidates: true,
  listCandidates: true,
  getCandidate: true,
  sourceCandidates: true,
  listVoices: true,
  getCredits: true,
};

/** What happened to one attempt, as far as retrying goes. */
export type AttemptOutcome =
  { kind: 'rate-limited'; retryAfterMs: number } | { kind: 'server-error'; status: number } | { kind: 'network'; notSent: boolean };

export type RetryDecision = { retry: true; delayMs: number } | { retry: false };

/**
 * Exponential backoff with jitter: the n-th retry waits between half and all of
 * `base × 2^(n-1)` (capped), so that clients failed together do not come back together.
 */
export function backoffDelay(retry: number, options: Required<RetryOptions>, random: () => number): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Whether to try again after `retriesSoFar` retries. A 429 and a request that never left
 * (connection refused, host not found) were not applied: any operation may go again. A 5xx or a
 * lost answer may have been applied: only the `RETRY_SAFE` operations go again.
 */
export function decideRetry(
  outcome: AttemptOutcome,
  endpoint: EndpointName,
  retriesSoFar: number,
  options: Required<RetryOptions>,
  random: () => number,
): RetryDecision {
  if (retriesSoFar >= options.maxRetries) return { retry: false };
  if (outcome.kind === 'rate-limited') {
    return outcome.retryAfterMs <= options.maxRetryAfterMs ? { retry: true, delayMs: outcome.retryAfterMs } : { retry: false };
  }
  const notApplied = outcome.kind === 'network' && outcome.notSent;
  if (!notApplied && !RETRY_SAFE[endpoint]) return { retry: false };
  return { retry: true, delayMs: backoffDelay(retriesSoFar + 1, options, random) };
}
