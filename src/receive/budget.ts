// How many bytes of request bodies a receiver holds before their signatures are verified, all
// requests together: a flood of large, slow, unsigned bodies fills this budget, not the memory.
//
// Bytes are claimed as they arrive (a declared Content-Length claims nothing), so a connection
// that announces a large body and trickles it holds only what it sent. When a body needs room
// the budget has not got, a holder gives way by the rules of fair-share.ts (the heaviest other
// client address first, else the slowest holder); with nobody to give way the body is refused
// (503 BUSY). A small reserve above the budget takes only the chunk that completes a body of
// announced length, as the service's deliveries come (whole, at once): a body that never ends can
// never hold it, so the real sender finds room even while a flood from its own address keeps the
// budget full with fast bodies. Once a second, a body that has come slower than the minimum rate since its start,
// after its grace, is cut off (408), as Kestrel's MinRequestBodyDataRate does. Each request holds
// a claim it gives back whole when it ends, however it ends.
import { RecentRate, victimFor, type FairnessRules, type Holding } from './fair-share.js';

/** 64 MiB: 64 bodies at the 1 MiB limit, and far more of the service's own (a few KiB each). */
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** How slow a body may come before it is cut off, so that slow senders cannot hold the budget of buffered bodies. */
export interface IntakeRates {
  /** A body that came slower than this since its start (bytes a second), after `minRateGraceMs`, is cut off. Default 240. */
  minBytesPerSecond?: number;
  /** How long a body may come slowly before `minBytesPerSecond` applies (ms). Default 5000. */
  minRateGraceMs?: number;
  /** When the budget is full, a body that received less than this in the last second gives way (after 1 s). Default 16 KiB. */
  slowBytesPerSecond?: number;
  /** Milliseconds, monotonic. Default `performance.now`. */
  now?: () => number;
}

export const DEFAULT_MIN_BYTES_PER_SECOND = 240;
export const DEFAULT_MIN_RATE_GRACE_MS = 5000;
export const DEFAULT_SLOW_BYTES_PER_SECOND = 16 * 1024;
/** Under contention, a holder younger than this is not judged slow. */
export const CONTENTION_GRACE_MS = 1000;
/** The reserve for chunks that complete a body: an eighth of the budget, at most 1 MiB. */
const reserveFor = (limitBytes: number) => Math.min(1024 * 1024, Math.floor(limitBytes / 8));

/** Why a claim was cut off: room made for another body, or too slow. */
export type CutReason = 'evicted' | 'too_slow';

/** One request's share of the budget: what it took, given back once by `release`. */
export interface BodyClaim {
  /**
   * Takes `bytes` more, cutting others off to make room if the rules allow; false (taking nothing)
   * when it cannot. `completing`: these are the last bytes of a body of announced length, which
   * may use the reserve.
   */
  take(bytes: number, completing?: boolean): boolean;
  /** The body is whole: from now on it is never cut off to make room. */
  complete(): void;
  /** Gives back everything this claim took; calling it again does nothing. */
  release(): void;
  /** Called at most once when the budget cuts this body off; its bytes are given back already. */
  onCut: ((reason: CutReason) => void) | undefined;
}

export interface BodyBudget {
  readonly limitBytes: number;
  /** The minimum rate of a body after its grace, in bytes a second (0: none). */
  readonly minBytesPerSecond: number;
  /** Bytes held by all claims now. */
  held(): number;
  /** A claim for one request's body, from the client at `address` ('' when unknown). */
  claim(address?: string): BodyClaim;
  /** Bodies cut off so far, by reason. */
  cuts(): Readonly<Record<CutReason, number>>;
}

interface LiveClaim extends BodyClaim, Holding {
  held: number;
  evictable: boolean;
  recentRate: number;
  readonly rate: RecentRate;
  /** When its last bytes came. */
  lastAt: number;
  cut(reason: CutReason): void;
}

/** One budget's state, shared by the plain functions below. */
interface Budget {
  readonly limitBytes: number;
  readonly reserve: number;
  readonly now: () => number;
  readonly minRate: number;
  readonly minRateGraceMs: number;
  readonly rules: FairnessRules;
  readonly live: Set<LiveClaim>;
  readonly cuts: Record<CutReason, number>;
  held: number;
  heartbeat: NodeJS.Timeout | undefined;
}

export function createBodyBudget(limitBytes: number, rates: IntakeRates = {}): BodyBudget {
  const budget: Budget = {
    limitBytes,
    reserve: reserveFor(limitBytes),
    now: rates.now ?? (() => performance.now()),
    minRate: rates.minBytesPerSecond ?? DEFAULT_MIN_BYTES_PER_SECOND,
    minRateGraceMs: rates.minRateGraceMs ?? DEFAULT_MIN_RATE_GRACE_MS,
    rules: { graceMs: CONTENTION_GRACE_MS, slowBytesPerSecond: rates.slowBytesPerSecond ?? DEFAULT_SLOW_BYTES_PER_SECOND },
    live: new Set(),
    cuts: { evicted: 0, too_slow: 0 },
    held: 0,
    heartbeat: undefined,
  };
  return {
    limitBytes,
    minBytesPerSecond: budget.minRate,
    held: () => budget.held,
    cuts: () => ({ ...budget.cuts }),
    claim: (address = '') => claimOf(budget, address),
  };
}

/** Once a second while bodies are being read (it stops itself once none is): the rate windows move on, and the too slow are cut off. */
function beat(budget: Budget): void {
  if (budget.live.size === 0) {
    clearInterval(budget.heartbeat);
    budget.heartbeat = undefined;
    return;
  }
  const at = budget.now();
  for (const claim of budget.live) {
    claim.rate.tick(at, claim.held);
    if (!claim.evictable || budget.minRate === 0) continue;
    const seconds = (at - claim.since) / 1000;
    if (at - claim.since >= budget.minRateGraceMs && claim.held / seconds < budget.minRate) claim.cut('too_slow');
  }
}

/** Cuts others off, by the fair-share rules, until `need` more bytes fit; false when nobody may go. */
function makeRoom(budget: Budget, requester: LiveClaim, need: number): boolean {
  while (budget.held + need > budget.limitBytes) {
    const at = budget.now();
    const others = [...budget.live].filter((claim) => claim !== requester);
    // Nothing for a whole grace is as slow as it gets, whatever came before.
    for (const claim of others) claim.recentRate = at - claim.lastAt >= CONTENTION_GRACE_MS ? 0 : claim.rate.rate(at, claim.held);
    const victim = victimFor(others, { address: requester.address, need }, at, budget.rules);
    if (victim === undefined) return false;
    victim.cut('evicted');
  }
  return true;
}

function claimOf(budget: Budget, address: string): BodyClaim {
  let done = false;
  const since = budget.now();
  const claim: LiveClaim = {
    address,
    held: 0,
    since,
    lastAt: since,
    evictable: true,
    recentRate: 0,
    rate: new RecentRate(since),
    onCut: undefined,
    take(bytes, completing = false) {
      if (done) return false;
      const total = budget.held + bytes;
      const fits = total <= budget.limitBytes || (completing && total <= budget.limitBytes + budget.reserve);
      if (!fits && !makeRoom(budget, claim, bytes)) return false;
      budget.held += bytes;
      claim.held += bytes;
      claim.lastAt = budget.now();
      return true;
    },
    complete() {
      claim.evictable = false;
    },
    release() {
      if (done) return;
      done = true;
      budget.held -= claim.held;
      claim.held = 0;
      budget.live.delete(claim);
    },
    cut(reason) {
      if (done) return;
      budget.cuts[reason]++;
      claim.release();
      claim.onCut?.(reason);
    },
  };
  budget.live.add(claim);
  if (budget.heartbeat === undefined) budget.heartbeat = setInterval(() => beat(budget), 1000).unref();
  return claim;
}
