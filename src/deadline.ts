// The one way to wait for work at most so long: every "this, or time up" race in the package,
// and the one wait that something happening ends early (`alarm`).

/**
 * Settles as `work` does, or with undefined once `ms` have passed, whichever comes first; the
 * timer is cleared either way. `unref`: the wait does not keep the process alive (a scrape, a
 * first heartbeat); otherwise it does, as a close that must finish before the process exits wants.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, options: { unref?: boolean } = {}): Promise<T | undefined> {
  if (!Number.isFinite(ms)) return await work;
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms), undefined);
    if (options.unref === true) timer.unref();
  });
  try {
    return await Promise.race([work, timeUp]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A wait of `ms` that `wake` ends early; a wake while no one waits ends the next wait at once.
 * `unref`: the wait does not keep the process alive (background work of a receiver left open).
 */
export function alarm(options: { unref?: boolean } = {}): { wait: (ms: number) => Promise<void>; wake: () => void } {
  let wakeUp: (() => void) | undefined;
  let woken = false;
  return {
    wait: (ms) =>
      new Promise<void>((resolve) => {
        if (woken) {
          woken = false;
          return resolve();
        }
        const timer = setTimeout(() => {
          wakeUp = undefined;
          resolve();
        }, ms);
        if (options.unref === true) timer.unref();
        wakeUp = () => {
          clearTimeout(timer);
          wakeUp = undefined;
          woken = false;
          resolve();
        };
      }),
    wake: () => {
      woken = true;
      wakeUp?.();
    },
  };
}
