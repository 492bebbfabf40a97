// Who gives way when the budget of bodies (or serve's connections) is full: the heaviest other
// address under contention, else the slowest past its grace, never a body being answered, and
// nobody when everyone is fast and alone; the budget cuts bodies off by those rules, and cuts off
// a body slower than the minimum rate after its grace.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBodyBudget, type CutReason } from '../../src/receive/budget.js';
import { RecentRate, victimFor, type Holding } from '../../src/receive/fair-share.js';

const rules = { graceMs: 1000, slowBytesPerSecond: 1000 };
const holding = (address: string, held: number, recentRate: number, since = 0, evictable = true): Holding => ({
  address,
  held,
  recentRate,
  since,
  evictable,
});

describe('victimFor', () => {
  it('names the slowest holder of the heaviest other address, when it holds more than the requester would', () => {
    const light = holding('10.0.0.1', 10, 0);
    const heavySlow = holding('10.0.0.2', 50, 5, 100);
    const heavyFast = holding('10.0.0.2', 50, 5000);
    expect(victimFor([light, heavyFast, heavySlow], { address: '10.0.0.3', need: 5 }, 200, rules)).toBe(heavySlow);
  });

  it('lets an address alone use everything: among fast holders of its own address, nobody gives way', () => {
    const fast = [holding('10.0.0.1', 50, 5000), holding('10.0.0.1', 50, 9000)];
    expect(victimFor(fast, { address: '10.0.0.1', need: 50 }, 5000, rules)).toBeUndefined();
  });

  it('does not cut an address that holds no more than the requester would', () => {
    const other = holding('10.0.0.2', 50, 5000);
    const own = holding('10.0.0.1', 40, 5000);
    expect(victimFor([other, own], { address: '10.0.0.1', need: 10 }, 5000, rules)).toBeUndefined();
  });

  it('names a slow holder of any address past its grace, the slowest then the oldest, but none in its grace', () => {
    const young = holding('10.0.0.1', 50, 0, 4500);
    const older = holding('10.0.0.1', 50, 10, 1000);
    const oldest = holding('10.0.0.1', 50, 10, 0);
    const fast = holding('10.0.0.1', 50, 5000, 0);
    expect(victimFor([young, older, oldest, fast], { address: '10.0.0.1', need: 1 }, 5000, rules)).toBe(oldest);
    expect(victimFor([young, fast], { address: '10.0.0.1', need: 1 }, 5000, rules)).toBeUndefined();
  });

  it('never names a holder that may not be cut, nor one that holds nothing', () => {
    const answered = holding('10.0.0.2', 500, 0, 0, false);
    const empty = holding('10.0.0.2', 0, 0, 0);
    expect(victimFor([answered, empty], { address: '10.0.0.1', need: 1 }, 5000, rules)).toBeUndefined();
  });
});

describe('RecentRate', () => {
  it('is the rate since the tick before last: what a holder sent long ago does not count', () => {
    const rate = new RecentRate(0);
    expect(rate.rate(1000, 5000)).toBe(5000); // its whole life so far
    rate.tick(1000, 5000);
    rate.tick(2000, 5000);
    expect(rate.rate(2500, 5000)).toBe(0);
    expect(rate.rate(2500, 5150)).toBe(100); // 150 bytes over the 1.5 s since the tick at 1000
  });
});

describe('the budget of bodies held', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A budget on a clock the test moves, and the cuts it tells each claim of. */
  function budgetAt(limit: number, rates: { minBytesPerSecond?: number } = {}) {
    let now = 0;
    const budget = createBodyBudget(limit, { now: () => now, slowBytesPerSecond: 1000, ...rates });
    const cuts: Array<[string, CutReason]> = [];
    const claim = (name: string, address: string) => {
      const c = budget.claim(address);
      c.onCut = (reason) => cuts.push([name, reason]);
      return c;
    };
    return { budget, claim, cuts, advance: (ms: number) => (now += ms) };
  }

  it('cuts off the heaviest other address to make room, giving its bytes back', () => {
    const { budget, claim, cuts } = budgetAt(1000);
    const flood = [claim('a1', '10.0.0.2'), claim('a2', '10.0.0.2')];
    for (const c of flood) expect(c.take(500)).toBe(true);
    const sender = claim('sender', '10.0.0.1');
    expect(sender.take(300)).toBe(true);
    expect(cuts).toEqual([['a1', 'evicted']]);
    expect(budget.held()).toBe(800);
    expect(budget.cuts()).toEqual({ evicted: 1, too_slow: 0 });
    // The flood's own next body, its address now the lighter, finds nobody to cut.
    expect(claim('a3', '10.0.0.2').take(300)).toBe(false);
    expect(budget.held()).toBe(800);
  });

  it('from one address, refuses while every holder is fast, and cuts off the stalled once past their grace', () => {
    const { claim, cuts, advance } = budgetAt(1000);
    const stalled = claim('stalled', '10.0.0.1');
    expect(stalled.take(900)).toBe(true);
    expect(claim('early', '10.0.0.1').take(200)).toBe(false);
    advance(500); // in its grace
    expect(claim('still early', '10.0.0.1').take(200)).toBe(false);
    advance(9500); // 900 bytes over 10 s: 90 a second
    expect(claim('sender', '10.0.0.1').take(200)).toBe(true);
    expect(cuts).toEqual([['stalled', 'evicted']]);
  });

  it('keeps a reserve for the chunk that completes a body, which no unfinished body can hold', () => {
    const { claim, cuts } = budgetAt(1000);
    expect(claim('flood', '10.0.0.1').take(1000)).toBe(true);
    // The flood's next unfinished body finds no room, and the flood is not slow: nobody gives way.
    expect(claim('more flood', '10.0.0.1').take(100)).toBe(false);
    // A body arriving whole fits in the reserve (an eighth of the budget), without cutting anyone off.
    expect(claim('sender', '10.0.0.1').take(100, true)).toBe(true);
    expect(claim('too large for the reserve', '10.0.0.1').take(100, true)).toBe(false);
    expect(cuts).toEqual([]);
  });

  it('counts a body that received nothing for a whole second as slow, however much came before', () => {
    const { claim, cuts, advance } = budgetAt(10_000);
    expect(claim('burst', '10.0.0.1').take(10_000)).toBe(true);
    advance(1200); // 10,000 bytes in its window of 1.2 s is fast; but nothing came for 1.2 s
    expect(claim('sender', '10.0.0.1').take(2000)).toBe(true);
    expect(cuts).toEqual([['burst', 'evicted']]);
  });

  it('never cuts off a body that is complete', () => {
    const { claim, cuts, advance } = budgetAt(1000);
    const whole = claim('whole', '10.0.0.2');
    whole.take(900);
    whole.complete();
    advance(60_000);
    expect(claim('sender', '10.0.0.1').take(200)).toBe(false);
    expect(cuts).toEqual([]);
  });

  it('cuts off, once a second, a body slower than the minimum since its start after its grace, whatever the room', () => {
    vi.useFakeTimers();
    const { budget, claim, cuts, advance } = budgetAt(1_000_000, { minBytesPerSecond: 100 });
    const slow = claim('slow', '10.0.0.1');
    const steady = claim('steady', '10.0.0.1');
    slow.take(10);
    steady.take(10);
    for (let second = 1; second <= 6; second++) {
      advance(1000);
      steady.take(150);
      vi.advanceTimersByTime(1000);
    }
    expect(cuts).toEqual([['slow', 'too_slow']]);
    expect(budget.held()).toBe(910);
    steady.release();
    expect(budget.held()).toBe(0);
  });
});
