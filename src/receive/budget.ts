// How many bytes of request bodies a receiver holds before their signatures are verified, all
// requests together: a flood of large, slow, unsigned bodies fills this budget, not the memory.
// Past it, new bodies are refused (503) unread; each request holds a claim it gives back whole
// when it ends, however it ends.

/** 64 MiB: 64 bodies at the 1 MiB limit, and far more of the service's own (a few KiB each). */
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** One request's share of the budget: what it took, given back once by `release`. */
export interface BodyClaim {
  /** Takes `bytes` more; false (taking nothing) when the budget cannot spare them. */
  take(bytes: number): boolean;
  /** Gives back everything this claim took; calling it again does nothing. */
  release(): void;
  /** Whether the budget is full (a body of unknown length cannot start). */
  budgetFull(): boolean;
}

export interface BodyBudget {
  readonly limitBytes: number;
  /** Bytes held by all claims now. */
  held(): number;
  claim(): BodyClaim;
}

export function createBodyBudget(limitBytes: number): BodyBudget {
  let held = 0;
  return {
    limitBytes,
    held: () => held,
    claim() {
      let taken = 0;
      return {
        take(bytes) {
          if (held + bytes > limitBytes) return false;
          held += bytes;
          taken += bytes;
          return true;
        },
        release() {
          held -= taken;
          taken = 0;
        },
        budgetFull: () => held >= limitBytes,
      };
    },
  };
}
