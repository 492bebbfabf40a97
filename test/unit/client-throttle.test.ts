// The client's throttle and backoff on a virtual clock: no test waits a real minute.
import { describe, expect, it } from 'vitest';
import { backoffDelay, createThrottle, RETRY_DEFAULTS, RETRY_SAFE } from '../../src/client/index.js';

const T0 = Date.parse('2026-03-10T09:00:00.000Z');
function virtualClock() {
  const clock = {
    t: T0,
    sleeps: [] as number[],
    now: () => clock.t,
    sleep: async (ms: number) => void (clock.sleeps.push(ms), (clock.t += ms)),
  };
  return clock;
}

/** The times at which `n` acquisitions in a row are let through. */
async function sendTimes(throttle: ReturnType<typeof createThrottle>, clock: ReturnType<typeof virtualClock>, n: number) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    await throttle.acquire();
    times.push(clock.t - T0);
  }
  return times;
}

describe('throttle: 60 a minute and 1,000 an hour, sliding', () => {
  it('lets 60 through at once, the 61st a minute after the first', async () => {
    const clock = virtualClock();
    const throttle = createThrottle({ clock });
    const times = await sendTimes(throttle, clock, 121);
    expect(times.slice(0, 60).every((t) => t === 0)).toBe(true);
    expect(times[60]).toBe(60_000);
    expect(times[120]).toBe(120_000);
  });

  it('the 1,001st request of an hour waits for the hour to pass', async () => {
    const clock = virtualClock();
    const throttle = createThrottle({ clock });
    const times = await sendTimes(throttle, clock, 1001);
    expect(times[999]).toBe(16 * 60_000);
    expect(times[1000]).toBe(3_600_000);
    // The 60 sent at 0 have just left the hour; the 1,001st came in.
    expect(throttle.sentInLastHour()).toBe(1000 - 60 + 1);
  });

  it('keeps the windows sliding: requests spread over the minute free their slots one by one', async () => {
    const clock = virtualClock();
    const throttle = createThrottle({ clock, perMinute: 3 });
    await throttle.acquire();
    clock.t += 10_000;
    await throttle.acquire();
    clock.t += 10_000;
    await throttle.acquire();
    await throttle.acquire();
    expect(clock.t - T0).toBe(60_000);
    await throttle.acquire();
    expect(clock.t - T0).toBe(70_000);
  });

  it('concurrent callers take the slots in order, none twice', async () => {
    const clock = virtualClock();
    const throttle = createThrottle({ clock, perMinute: 2 });
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3, 4].map((i) => throttle.acquire().then(() => order.push(i))));
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(clock.t - T0).toBe(120_000);
  });

  it('pause holds back the next request', async () => {
    const clock = virtualClock();
    const throttle = createThrottle({ clock });
    throttle.pause(7_000);
    await throttle.acquire();
    expect(clock.sleeps).toEqual([7_000]);
  });

  it('refuses limits that are not whole numbers from 1', () => {
    expect(() => createThrottle({ perMinute: 0 })).toThrow(RangeError);
    expect(() => createThrottle({ perHour: 1.5 })).toThrow(RangeError);
  });
});

describe('backoff', () => {
  const options = { ...RETRY_DEFAULTS, baseDelayMs: 100, maxDelayMs: 1000 };
  it('doubles from the base, between half and all of it, up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, options, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([1, 2, 3].map((n) => backoffDelay(n, options, () => 0))).toEqual([50, 100, 200]);
  });

  it('only creating a campaign is unsafe to send again', () => {
    expect(
      Object.entries(RETRY_SAFE)
        .filter(([, safe]) => !safe)
        .map(([name]) => name),
    ).toEqual(['createCampaign']);
  });
});
