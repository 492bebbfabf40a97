// What the dispatcher's two parts (the projection loop and the handler pump) are given: the options
// as a user passes them, resolved once into settings with their defaults, and the observer.
import type { InboxRow } from '../store/rows.js';

/** How the receiver projects events and runs handlers; every field has a default. */
export interface DispatcherOptions {
  /** Events projected per transaction (the intake answers between batches). Default 64. */
  batchSize?: number;
  /** Handler calls running at once (across candidates). Default 8. */
  handlerConcurrency?: number;
  /** Events whose handlers may be in progress at once; bounds memory. Default 256. */
  handlerWindow?: number;
  /** Calls of a failing handler before it becomes a dead letter. Default 5. */
  handlerAttempts?: number;
  /** First retry delay of a failing handler (ms), doubled at each attempt. Default 100. */
  handlerRetryDelayMs?: number;
  /**
   * Longest one handler call may run (ms) before it counts as a failed attempt: its signal is
   * aborted, its concurrency slot given to others, and it is retried. Default 30000.
   */
  handlerTimeoutMs?: number;
  /**
   * How long this process's claim on an event's handlers holds without renewal (ms). Renewed while
   * they run; a process that dies loses its claims after this, and another takes them over. Default 15000.
   */
  handlerLeaseMs?: number;
  /** How often to look for work that no wake-up announced (ms): another process's, or a missed notification. Default 1000. */
  pollMs?: number;
}

/** The options with their defaults applied, once, for both parts. */
export type DispatchSettings = Required<DispatcherOptions>;

export function dispatchSettings(options: DispatcherOptions): DispatchSettings {
  return {
    batchSize: options.batchSize ?? 64,
    handlerConcurrency: options.handlerConcurrency ?? 8,
    handlerWindow: options.handlerWindow ?? 256,
    handlerAttempts: options.handlerAttempts ?? 5,
    handlerRetryDelayMs: options.handlerRetryDelayMs ?? 100,
    handlerTimeoutMs: options.handlerTimeoutMs ?? 30_000,
    handlerLeaseMs: options.handlerLeaseMs ?? 15_000,
    pollMs: options.pollMs ?? 1000,
  };
}

/** Told what the dispatcher did (for metrics); each call is cheap and synchronous. */
export interface DispatchObserver {
  processed?(row: InboxRow, state: 'projected' | 'unknown' | 'dead', at: number): void;
  handlerCall?(handler: string, result: 'ok' | 'failed' | 'timeout'): void;
}
