import type { Logger } from '../logging.js';
import type { ReconcileReport } from './reconcile.js';
import { count } from '../words.js';
import { withDeadline } from '../deadline.js';

export interface ReconcileSchedule {
  /** Stops the schedule; a run in progress stops after its campaign (it resumes at the next start). */
  stop(timeoutMs?: number): Promise<void>;
}

/**
 * Runs `run` every `everyMs`, off the request path: the first run a minute after the start (or
 * sooner with a shorter period), each next one `everyMs` after the previous ended, never two at once.
 * A failed run is logged (code and message, no candidate data) and tried again at the next turn.
 */
export function scheduleReconcile(options: {
  everyMs: number;
  run: (signal: AbortSignal) => Promise<ReconcileReport>;
  logger: Logger;
  /** When the first run starts (ms); default a minute, or `everyMs` when shorter. Several accounts' schedules spread their first runs. */
  firstInMs?: number;
}): ReconcileSchedule {
  const { everyMs, run, logger } = options;
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;

  const next = (ms: number) => {
    if (stopping.signal.aborted) return;
    timer = setTimeout(turn, ms);
    timer.unref();
  };
  function turn(): void {
    const started = performance.now();
    current = run(stopping.signal)
      .then((report) => {
        logger.info(
          {
            campaigns: report.campaigns.length,
            repaired: report.repairs.length,
            missing: report.repairs.filter((r) => r.missing).length,
            written: report.written,
            resumed: report.resumed,
            interrupted: report.interrupted,
            ms: Math.round(performance.now() - started),
          },
          report.repairs.length === 0 ? 'reconcile: nothing to repair' : `reconcile: ${count(report.repairs.length, 'row')} repaired`,
        );
      })
      .catch((error: unknown) => {
        const e = error as { code?: string; status?: number; message?: string };
        logger.warn({ code: e.code, status: e.status, message: e.message }, 'reconcile failed; it runs again at the next turn');
      })
      .finally(() => {
        current = undefined;
        next(everyMs);
      });
  }
  next(options.firstInMs ?? Math.min(everyMs, 60_000));

  return {
    async stop(timeoutMs = 5000): Promise<void> {
      stopping.abort();
      clearTimeout(timer);
      if (current !== undefined) await withDeadline(current, timeoutMs);
    },
  };
}
