// A stored body as one line of NDJSON, byte for byte (what `dump` writes and replay reads). A body
// that is a line already (no LF, not ending in CR, not blank: nearly every event) is written as it
// is, so that a dump is plain NDJSON any tool reads. One that is not (pretty-printed JSON, an empty
// or binary body) is written as `{"prequal-hooks:raw-base64":"<its bytes in base64>"}`, which
// replay turns back into those bytes; so is a body that begins as that form does, so that no body
// is ever taken for another.

const ESCAPE_PREFIX = Buffer.from('{"prequal-hooks:raw-base64":"', 'utf8');
const ESCAPE_SUFFIX = Buffer.from('"}', 'utf8');
const [TAB, LF, CR, SPACE] = [0x09, 0x0a, 0x0d, 0x20];

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
  const plain = !raw.includes(LF) && raw[raw.length - 1] !== CR && !isBlank(raw) && !startsWith(raw, ESCAPE_PREFIX);
  if (plain) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return Buffer.concat([ESCAPE_PREFIX, Buffer.from(Buffer.from(raw).toString('base64'), 'utf8'), ESCAPE_SUFFIX]);
}

/** The body a line (without its LF, its CR dropped) stands for: the line itself, or the bytes it escapes. */
export function lineBody(line: Buffer): Buffer {
  if (!startsWith(line, ESCAPE_PREFIX) || line.length < ESCAPE_PREFIX.length + ESCAPE_SUFFIX.length) return line;
  if (Buffer.compare(line.subarray(line.length - ESCAPE_SUFFIX.length), ESCAPE_SUFFIX) !== 0) return line;
  const encoded = line.subarray(ESCAPE_PREFIX.length, line.length - ESCAPE_SUFFIX.length).toString('latin1');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return line;
  return Buffer.from(encoded, 'base64');
}
