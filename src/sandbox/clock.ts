/** Where the sandbox reads the time; tests inject one to cross minutes and hours without waiting. */
export interface Clock {
  /** The time, in Unix ms. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Event timestamps: the clock's time, but always at least 1 ms after the previous event's. The
 * receiver orders events by instant, then kind; strictly increasing instants make that order the
 * order in which the sandbox changed its state, so the projection ends where the sandbox is.
 */
export function createEventClock(clock: Clock) {
  let last = -Infinity;
  return {
    next(): string {
      last = Math.max(clock.now(), last + 1);
      return new Date(last).toISOString();
    },
  };
}
export type EventClock = ReturnType<typeof createEventClock>;
