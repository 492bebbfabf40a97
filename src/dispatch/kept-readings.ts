// How a body read once in this process is not read again: the intake's reading of a body it
// stored, kept by inbox id until the projection claims that row. The stored bytes stay the truth:
// a kept reading is used only for the very bytes and identity the claimed row holds, and a row
// with none kept (claimed by another process, after a restart, evicted, redacted since) is read
// from its bytes as before.

/** A claimed row, as far as a kept reading is checked against it. */
interface ClaimedBody {
  inbox_id: number;
  raw: Uint8Array;
  identity: string | null;
}

/** How much is kept at most: the oldest readings go first, so that a backlog never grows memory. */
interface KeptReadingsLimits {
  /** Readings kept at most. */
  maxEntries: number;
  /** Bytes of the bodies they were read from, at most (their parsed forms take a few times as much). */
  maxBytes: number;
}

const DEFAULT_KEPT_READINGS: KeptReadingsLimits = { maxEntries: 10_000, maxBytes: 16 * 1024 * 1024 };

interface Kept<T> {
  raw: Uint8Array;
  identity: string;
  value: T;
}

/**
 * Readings of stored bodies by inbox id, each taken (and forgotten) once. `take` gives a reading
 * only when the row's identity and bytes are those it was read from: the caller then gets exactly
 * what reading the row would give.
 */
export function createKeptReadings<T>(limits: KeptReadingsLimits = DEFAULT_KEPT_READINGS) {
  const kept = new Map<number, Kept<T>>();
  let bytes = 0;
  const forget = (inboxId: number, entry: Kept<T>) => {
    kept.delete(inboxId);
    bytes -= entry.raw.byteLength;
  };
  return {
    /** Keeps what `raw` (stored as `inboxId`, with `identity`) reads as, evicting the oldest past the limits. */
    keep(inboxId: number, raw: Uint8Array, identity: string, value: T): void {
      if (raw.byteLength > limits.maxBytes || limits.maxEntries <= 0) return;
      const previous = kept.get(inboxId);
      if (previous !== undefined) forget(inboxId, previous);
      kept.set(inboxId, { raw, identity, value });
      bytes += raw.byteLength;
      // A Map iterates in insertion order: the first entry is the oldest.
      for (const [oldestId, oldest] of kept) {
        if (kept.size <= limits.maxEntries && bytes <= limits.maxBytes) break;
        forget(oldestId, oldest);
      }
    },
    /** The reading kept for this row, forgotten now; undefined when none is, or the row no longer holds those bytes. */
    take(row: ClaimedBody): T | undefined {
      const entry = kept.get(row.inbox_id);
      if (entry === undefined) return undefined;
      forget(row.inbox_id, entry);
      if (row.identity !== entry.identity || !sameBytes(row.raw, entry.raw)) return undefined;
      return entry.value;
    },
    /** Readings kept now, and the bytes of their bodies. */
    size: (): { entries: number; bytes: number } => ({ entries: kept.size, bytes }),
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

export type KeptReadings<T> = ReturnType<typeof createKeptReadings<T>>;
