// One request body, copied as it arrives into a single buffer, its bytes claimed from the budget
// as they arrive (a declared Content-Length claims nothing, and reserves at most the first
// FIRST_CAPACITY bytes of room). The socket's chunks are dropped as soon as they are copied: a slow
// sender leaves no trail of small allocations.
//
// A large body is held in a resizable ArrayBuffer, handed back to the system (resized to 0) the
// moment the request is done with it, whatever the garbage collector does: a flood of slow,
// unfinished bodies lives long enough to reach the old generation, which V8 may not collect for
// minutes once the flood stops. Small bodies (the service's own are a few KiB) keep a plain
// buffer: a resizable one costs a mapping of its own, about 50 µs a request.
//
// A body costs what its bytes cost, not what its framing costs: each piece (a chunk of chunked
// framing, or a read of a socket written a byte at a time) is a call into JavaScript, so a 1 MiB
// body in one-byte chunks cost seconds of CPU. Past a free allowance of pieces, a body must bring
// on average MIN_PIECE_BYTES a piece, or it is refused as fragmented (400, the connection closed):
// a real sender's body comes in a few pieces, or in pieces of kilobytes (TCP segments at least).
import type { BodyClaim } from './budget.js';

/** Up to this, a body is held in a plain buffer; past it, in a resizable one. */
const SMALL_BODY_BYTES = 64 * 1024;
/** The plain buffer a body of unknown length starts with. */
const FIRST_CAPACITY = 16 * 1024;

/** Pieces a body may come in before their sizes are looked at. */
export const FREE_PIECES = 64;
/** Past the free pieces, the bytes each further piece must bring on average. */
export const MIN_PIECE_BYTES = 256;

type Added = 'ok' | 'too_large' | 'busy' | 'fragmented';

/** Whether `pieces` that brought `bytes` in all are too many for their size. */
export function tooFragmented(pieces: number, bytes: number): boolean {
  return pieces > FREE_PIECES && bytes < (pieces - FREE_PIECES) * MIN_PIECE_BYTES;
}

export interface BodyBuffer {
  /**
   * Copies a chunk in; `too_large` past the limit, `busy` when the budget cannot spare the bytes,
   * `fragmented` when the body comes in too many pieces for its size (nothing more is taken).
   */
  add(chunk: Uint8Array): Added;
  /** The bytes received, to keep; a large body's own storage is handed back. Call once, at the end. */
  bytes(): Buffer;
  /** Hands the storage back, for a body refused or abandoned. */
  discard(): void;
  readonly size: number;
  /** The pieces added so far. */
  readonly pieces: number;
}

/**
 * A buffer for a body of `declared` bytes, or of unknown length. Its room grows with what arrives
 * (a body that comes whole in its first chunk, as the service's do, gets exactly its size).
 */
export function createBodyBuffer(limit: number, claim: BodyClaim, declared: number | undefined): BodyBuffer {
  let size = 0;
  let pieces = 0;
  // allocUnsafeSlow: its own allocation, outside Node's shared pool.
  let small: Buffer | undefined = Buffer.allocUnsafeSlow(0);
  let large: ResizableArrayBuffer | undefined;
  /** Room for `needed` bytes: the plain buffer doubled, or moved into (or grown in) the resizable one. */
  const makeRoom = (needed: number) => {
    if (small !== undefined && needed <= small.length) return;
    if (small !== undefined && needed <= SMALL_BODY_BYTES) {
      // Never more than was announced, nor (for a body that has not shown it will come) more than a first helping.
      const wanted = Math.max(needed, Math.min(small.length * 2 || FIRST_CAPACITY, declared ?? SMALL_BODY_BYTES));
      const grown = Buffer.allocUnsafeSlow(Math.min(SMALL_BODY_BYTES, wanted));
      small.copy(grown, 0, 0, size);
      small = grown;
      return;
    }
    if (large === undefined) {
      large = resizable(needed, limit);
      new Uint8Array(large).set(small!.subarray(0, size));
      small = undefined;
    } else if (needed > large.byteLength) large.resize(needed);
  };
  return {
    get size() {
      return size;
    },
    get pieces() {
      return pieces;
    },
    add(chunk) {
      const needed = size + chunk.byteLength;
      if (needed > limit) return 'too_large';
      if (tooFragmented(++pieces, needed)) return 'fragmented';
      if (!claim.take(chunk.byteLength, needed === declared)) return 'busy';
      makeRoom(needed);
      (small ?? new Uint8Array(large!)).set(chunk, size);
      size = needed;
      return 'ok';
    },
    bytes() {
      if (small !== undefined) return size === small.length ? small : small.subarray(0, size);
      // A copy to keep: the resizable buffer is handed back now, and a view of it would then be empty.
      const kept = Buffer.from(new Uint8Array(large!, 0, size));
      large!.resize(0);
      return kept;
    },
    discard() {
      large?.resize(0);
      small = undefined;
    },
  };
}

/** ES2024's resizable ArrayBuffer (Node 20 has it; the compiler's lib here is ES2023). */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}

/** A resizable ArrayBuffer of `length` bytes, growable to `max`: its pages are committed as it grows, and released by resize(0). */
function resizable(length: number, max: number): ResizableArrayBuffer {
  const Resizable = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;
  return new Resizable(length, { maxByteLength: max });
}
