import { createHash } from 'node:crypto';

// Code-point order, as PROJECTION.md asks. JavaScript's `<` compares UTF-16 code units, which
// disagrees only when a surrogate (astral character) meets a character in U+E000..U+FFFF.
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Canonical JSON: object keys sorted recursively by code point, no insignificant white space,
 * strings and numbers as `JSON.stringify` writes them. `undefined` members are left out, as
 * `JSON.stringify` leaves them out.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort(compareCodePoints);
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

export interface EnvelopeFields {
  event: unknown;
  timestamp: unknown;
  data: unknown;
}

/**
 * An event's identity (PROJECTION.md section 1): SHA-256, lowercase hex, of the canonical JSON
 * of `{event, timestamp, data}`. Deliveries that differ only in key order or spacing share it.
 */
export function eventIdentity(envelope: EnvelopeFields): string {
  const canonical = canonicalJson({
    data: envelope.data,
    event: envelope.event,
    timestamp: envelope.timestamp,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
