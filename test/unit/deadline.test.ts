import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../src/deadline.js';

describe('withDeadline', () => {
  it('settles with the work when it comes first, and with undefined at the deadline otherwise', async () => {
    expect(await withDeadline(Promise.resolve(7), 1000)).toBe(7);
    const never = new Promise<number>(() => {});
    const started = performance.now();
    expect(await withDeadline(never, 50)).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("passes the work's failure on, and waits for the work alone when there is no finite deadline", async () => {
    await expect(withDeadline(Promise.reject(new Error('boom')), 1000)).rejects.toThrow('boom');
    expect(await withDeadline(new Promise((resolve) => setTimeout(() => resolve('late'), 30)), Infinity)).toBe('late');
  });

  it('leaves no timer behind once the work settled first', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await withDeadline(Promise.resolve(), 60_000);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });
});
