import { hash } from 'node:crypto';

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

// Array-index keys ("0", "12") are the one case where JSON.stringify does not keep an object's
// key order (they always come first, in numeric order), so objects holding them take the slow path.
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;

/**
 * Canonical JSON: object keys sorted recursively by code point, no insignificant white space,
 * strings and numbers as `JSON.stringify` writes them. `undefined` members are left out, as
 * `JSON.stringify` leaves them out.
 */
export function canonicalJson(value: unknown): string {
  const sorted = sortedCopy(value);
  return sorted === SLOW ? slowCanonicalJson(value) : (JSON.stringify(sorted) ?? 'null');
}

const SLOW = Symbol('slow');

/** A copy with keys inserted in code-point order, for JSON.stringify to write as is (the fast path). */
function sortedCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = sortedCopy(value[i]);
      if (item === SLOW) return SLOW;
      copy[i] = item;
    }
    return copy;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareCodePoints);
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    if (INDEX_KEY.test(key)) return SLOW;
    const item = sortedCopy(record[key]);
    if (item === SLOW) return SLOW;
    copy[key] = item;
  }
  return copy;
}

function slowCanonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => slowCanonicalJson(item)).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort(compareCodePoints);
  return `{${keys.map((key) => `${JSON.stringify(key)}:${slowCanonicalJson(record[key])}`).join(',')}}`;
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
  return hash('sha256', canonical, 'hex');
}
