// Retrying a call with a doubling delay until it succeeds, runs out of attempts, or the receiver
// stops: the handler pump and the erasure hooks both retry this way.
import { setTimeout as delay } from 'node:timers/promises';
import { HandlerTimeoutError } from './handler-calls.js';

/** How a call retried ended: it succeeded, it failed `attempts` times, or the receiver stopped first. */
export type RetriedCall = { outcome: 'ok' } | { outcome: 'failed'; error: unknown; attempts: number } | { outcome: 'stopped' };

export interface RetryOptions {
  /** Calls before giving up. */
  attempts: number;
  /** First retry delay (ms), doubled at each attempt. */
  retryDelayMs: number;
  /** Aborted when the receiver stops: no retry waits past it, and none starts after it. */
  stopping: AbortSignal;
  /** Told each attempt's result (metrics). */
  onAttempt?: (result: 'ok' | 'failed' | 'timeout') => void;
}

/** Calls `run` with its attempt number (1, 2 …) until it succeeds, gives up, or the receiver stops. */
export async function callWithRetries(run: (attempt: number) => Promise<unknown>, options: RetryOptions): Promise<RetriedCall> {
  const { attempts, retryDelayMs, stopping, onAttempt } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      await run(attempt);
      onAttempt?.('ok');
      return { outcome: 'ok' };
    } catch (error) {
      onAttempt?.(error instanceof HandlerTimeoutError ? 'timeout' : 'failed');
      if (stopping.aborted) return { outcome: 'stopped' };
      if (attempt >= attempts) return { outcome: 'failed', error, attempts: attempt };
      await delay(retryDelayMs * 2 ** (attempt - 1), undefined, { signal: stopping }).catch(() => undefined);
      if (stopping.aborted) return { outcome: 'stopped' };
    }
  }
}
