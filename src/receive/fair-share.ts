// Who gives way when a shared resource is full (the bytes of bodies held before verification, or
// the open connections of `serve`): never the newcomer by default, which is how one sender's
// complete, signed request gets through while anonymous clients hold everything slowly.
//
// Two rules, the first that names someone wins:
// 1. Shares, under contention. When another client address holds more than the requester's does
//    with what it asks for, the heaviest such address gives way: its holder that received least
//    lately, the oldest of those. An address alone (a load test, a proxy without --trust-proxy)
//    is never cut by this rule, so it may use the whole resource.
// 2. The slow. Otherwise a holder past its grace that receives less than the slow rate gives way,
//    the slowest (then the oldest) first, whatever its address.
// Holders that may not be cut (a request whose body is complete and is being answered) are
// never named. Nobody named: the requester is refused, as before.

/** One holder of a shared resource as this choice sees it. */
export interface Holding {
  /** The client's address (the proxy's forwarded address with --trust-proxy); '' when unknown. */
  readonly address: string;
  /** What it holds: bytes, or 1 for a connection. */
  readonly held: number;
  /** Bytes a second it received over the last second or two (its whole life when younger). */
  readonly recentRate: number;
  /** When it started, on the clock of `now`. */
  readonly since: number;
  /** False while it must not be cut. */
  readonly evictable: boolean;
}

export interface FairnessRules {
  /** A holder younger than this is not slow yet (milliseconds). */
  readonly graceMs: number;
  /** Under this many bytes a second (after its grace), a holder is slow. */
  readonly slowBytesPerSecond: number;
}

/** The holder that gives way so that `requester` can take `need` more, or none. */
export function victimFor<H extends Holding>(
  holdings: Iterable<H>,
  requester: { address: string; need: number },
  now: number,
  rules: FairnessRules,
): H | undefined {
  const all = [...holdings];
  const totals = new Map<string, number>();
  for (const h of all) totals.set(h.address, (totals.get(h.address) ?? 0) + h.held);
  const wanted = (totals.get(requester.address) ?? 0) + requester.need;
  let byShare: H | undefined;
  let bySlowness: H | undefined;
  for (const h of all) {
    if (!h.evictable || h.held <= 0) continue;
    const total = totals.get(h.address)!;
    if (h.address !== requester.address && total > wanted) {
      const best = byShare === undefined ? 1 : compareShare(totals.get(byShare.address)!, total, byShare, h);
      if (best > 0) byShare = h;
    }
    if (now - h.since >= rules.graceMs && h.recentRate < rules.slowBytesPerSecond) {
      if (bySlowness === undefined || slower(h, bySlowness)) bySlowness = h;
    }
  }
  return byShare ?? bySlowness;
}

/** Positive when `candidate` (of an address holding `candidateTotal`) should go before `current`. */
function compareShare<H extends Holding>(currentTotal: number, candidateTotal: number, current: H, candidate: H): number {
  if (candidateTotal !== currentTotal) return candidateTotal - currentTotal;
  return slower(candidate, current) ? 1 : -1;
}

/** Whether `a` received less lately than `b` (or as little, and has held for longer). */
function slower(a: Holding, b: Holding): boolean {
  return a.recentRate !== b.recentRate ? a.recentRate < b.recentRate : a.since < b.since;
}

/**
 * Bytes a second over the last one to two seconds: `tick` (once a second) moves the window on,
 * `rate` reads it at any time. Cheap enough to keep one per connection.
 */
export class RecentRate {
  private windowAt: number;
  private windowBytes = 0;
  private lastAt: number;
  private lastBytes = 0;

  constructor(now: number) {
    this.windowAt = now;
    this.lastAt = now;
  }

  /** Starts a new window at `total` bytes received so far. */
  tick(now: number, total: number): void {
    this.windowAt = this.lastAt;
    this.windowBytes = this.lastBytes;
    this.lastAt = now;
    this.lastBytes = total;
  }

  rate(now: number, total: number): number {
    const seconds = Math.max(now - this.windowAt, 1) / 1000;
    return (total - this.windowBytes) / seconds;
  }
}
