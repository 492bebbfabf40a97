// The lines `dump` writes and replay reads: NDJSON, one line a stored body or an erasure.
//
// A body that is a line already (no LF, not ending in CR, not blank: nearly every event) is written
// as it is, so that a dump is plain NDJSON any tool reads. One that is not (pretty-printed JSON, an
// empty or binary body) is written as `{"prequal-hooks:raw-base64":"<its bytes in base64>"}`, which
// replay turns back into those bytes; so is a body that begins as our own lines do
// (`{"prequal-hooks:`), so that no body is ever taken for another or for an erasure.
//
// An erasure is `{"prequal-hooks:erasure":{"candidate_id":"…","erased_at":"…"}}`: one key, never an
// event envelope (which has `event`, `timestamp` and `data`). It carries the candidate's id and the
// instant only, never the operator's reason (their words may name the person).
import { normaliseTimestamp } from '../events/index.js';

const OURS = Buffer.from('{"prequal-hooks:', 'utf8');
const ESCAPE_PREFIX = Buffer.from('{"prequal-hooks:raw-base64":"', 'utf8');
const ESCAPE_SUFFIX = Buffer.from('"}', 'utf8');
const ERASURE_KEY = 'prequal-hooks:erasure';
const ERASURE_PREFIX = Buffer.from(`{"${ERASURE_KEY}":`, 'utf8');
const [TAB, LF, CR, SPACE] = [0x09, 0x0a, 0x0d, 0x20];

/** An erasure as a dump carries it: whom, and when (UTC ISO 8601 with milliseconds). */
export interface CopiedErasure {
  candidateId: string;
  erasedAt: string;
}

/** What a line stands for: a body, an erasure, or a line in the erasure's form that does not hold one. */
export type DumpLine = { body: Buffer } | { erasure: CopiedErasure } | { invalid: string };

/** Whether bytes are only blanks (space, tab, CR, vertical tab, form feed), which an NDJSON reader skips. */
export function isBlank(bytes: Uint8Array): boolean {
  for (const c of bytes) if (c !== SPACE && c !== TAB && c !== CR && c !== 0x0b && c !== 0x0c) return false;
  return true;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && Buffer.compare(bytes.subarray(0, prefix.length), prefix) === 0;
}

/** The line (without its LF) that stands for a body. */
export function bodyLine(raw: Uint8Array): Buffer {
  const plain = !raw.includes(LF) && raw[raw.length - 1] !== CR && !isBlank(raw) && !startsWith(raw, OURS);
  if (plain) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return Buffer.concat([ESCAPE_PREFIX, Buffer.from(Buffer.from(raw).toString('base64'), 'utf8'), ESCAPE_SUFFIX]);
}

/** The line (without its LF) that stands for an erasure. */
export function erasureLine(erasure: CopiedErasure): Buffer {
  return Buffer.from(JSON.stringify({ [ERASURE_KEY]: { candidate_id: erasure.candidateId, erased_at: erasure.erasedAt } }), 'utf8');
}

/** The body a line (without its LF, its CR dropped) stands for: the line itself, or the bytes it escapes. */
export function lineBody(line: Buffer): Buffer {
  if (!startsWith(line, ESCAPE_PREFIX) || line.length < ESCAPE_PREFIX.length + ESCAPE_SUFFIX.length) return line;
  if (Buffer.compare(line.subarray(line.length - ESCAPE_SUFFIX.length), ESCAPE_SUFFIX) !== 0) return line;
  const encoded = line.subarray(ESCAPE_PREFIX.length, line.length - ESCAPE_SUFFIX.length).toString('latin1');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return line;
  return Buffer.from(encoded, 'base64');
}

/** The erasure a line in the erasure's form holds; the message never repeats the line. */
function lineErasure(line: Buffer): DumpLine {
  const invalid = { invalid: 'not an erasure line ({"prequal-hooks:erasure":{"candidate_id":"…","erased_at":"<ISO 8601>"}})' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(line.toString('utf8'));
  } catch {
    return invalid;
  }
  const fields = (parsed as Record<string, unknown>)[ERASURE_KEY] as Record<string, unknown> | null;
  if (Object.keys(parsed as object).length !== 1 || typeof fields !== 'object' || fields === null) return invalid;
  const { candidate_id: candidateId, erased_at: erasedAt } = fields;
  if (typeof candidateId !== 'string' || candidateId === '' || typeof erasedAt !== 'string') return invalid;
  const instant = normaliseTimestamp(erasedAt);
  return instant === null ? invalid : { erasure: { candidateId, erasedAt: instant } };
}

/** What a line of a dump (without its LF, its CR dropped) stands for. */
export function readLine(line: Buffer): DumpLine {
  return startsWith(line, ERASURE_PREFIX) ? lineErasure(line) : { body: lineBody(line) };
}
