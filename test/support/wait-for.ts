// The suite's one way to wait for something to happen: poll for it, with a deadline, and fail
// naming what did not happen. Tests wait for the event (a log line, a row, a file), never for a
// fixed time (CONTRIBUTING.md, "Waiting").
import { setTimeout as delay } from 'node:timers/promises';

// The real clock and timer, taken before a test can fake them (vi.useFakeTimers): a test that moves
// a fake Date by hand can still wait for real work.
const realNow = Date.now;

/**
 * Calls `check` (which may be async) every `everyMs` until it returns something other than
 * `undefined` or `false`, and returns that; throws after `timeoutMs`, naming `what` was awaited
 * and the last value seen. An exception thrown by `check` fails at once.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
  { everyMs = 25 }: { everyMs?: number } = {},
): Promise<Exclude<T, undefined | false>> {
  const started = realNow();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (realNow() - started >= timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (the last check gave ${String(value)})`);
    }
    // eslint-disable-next-line no-restricted-syntax -- the poll's own interval: the one pause every wait shares
    await delay(everyMs);
  }
}
