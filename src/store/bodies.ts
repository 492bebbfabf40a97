// Raw bodies as the inbox stores them: deflated with a dictionary of the service's event shapes
// (body-dictionary.ts), which takes a body of the replay scenario from 474 bytes to about 220, and
// the codec that wrote them beside them, so that every row stays readable by every later version:
//   NULL  stored before bodies were compressed (the upgrade rewrites them), the bytes as received;
//   0     the bytes as received (a body deflate would not make smaller);
//   1     deflate (raw, no header) with dictionary 1.
// The store encodes as it writes and decodes as it reads: everything above it, and everything a
// user exports, sees the exact bytes received. It imports nothing but zlib and the dictionary: the
// thread that deflates a bulk load's bodies (body-thread.ts) loads it and nothing more.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { BODY_DICTIONARIES } from './body-dictionary.js';

/** The codec new rows are written with. */
const CURRENT = 1;
// zlib's output is read in chunks of this many bytes, and a result that fits one is a slice of it:
// with the default 16 KB, each body read or written held 16 KB until collected (a rebuild's peak
// memory rose by 64 MB) and took a 16 KB allocation. 1 KB comes from Node's shared buffer pool,
// and a larger body takes several chunks.
const CHUNK_BYTES = 1024;
// A 4 KB window (the dictionary is 2 KB) and a small hash table: a quarter of the default's set-up
// for the same size, measured on the scenario's bodies (about 25 against 50 µs a body).
const DEFLATE_OPTIONS = { windowBits: 12, memLevel: 5, chunkSize: CHUNK_BYTES } as const;

/** A body as the inbox stores it: its bytes and the codec they are written in. */
export interface StoredBody {
  codec: number;
  bytes: Buffer;
}

function dictionary(codec: number): Buffer {
  const found = BODY_DICTIONARIES[codec];
  if (found === undefined) throw new Error(`a stored body is in codec ${codec}, which this version does not know: upgrade prequal-hooks`);
  return found;
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The form a body is stored in: deflated when that makes it smaller, else as received. */
export function storedBody(raw: Uint8Array): StoredBody {
  const packed = deflateRawSync(raw, { ...DEFLATE_OPTIONS, dictionary: dictionary(CURRENT) });
  return packed.byteLength < raw.byteLength ? { codec: CURRENT, bytes: packed } : { codec: 0, bytes: asBuffer(raw) };
}

/** The exact bytes received, from a stored body and its codec (null or 0: stored as received). */
export function bodyOf(codec: number | bigint | null | undefined, bytes: Uint8Array): Buffer {
  if (codec === null || codec === undefined || Number(codec) === 0) return asBuffer(bytes);
  return inflateRawSync(bytes, { dictionary: dictionary(Number(codec)), chunkSize: CHUNK_BYTES });
}
