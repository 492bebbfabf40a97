// The one way to run background work at start and then every so often (the retention of the
// feed's changes, of personal data): off the caller's turn, never two runs at once, and a stop
// that waits for the run in progress.

/** Work started by `repeatFromStart`. */
export interface Repeating {
  /** No run starts any more; resolves once the run in progress, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `job` on the next turn of the event loop, then every `everyMs` (a turn that finds the last
 * run still going is skipped); the timer keeps no process alive. `job` handles its own errors (a
 * rejection is dropped) and may ask `stopped()` to end a long run early.
 */
export function repeatFromStart(job: (stopped: () => boolean) => Promise<void>, everyMs: number): Repeating {
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (running !== undefined || stopped) return;
    running = job(() => stopped)
      .catch(() => undefined)
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, everyMs);
  timer.unref();
  setImmediate(run);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
