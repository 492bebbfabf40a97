import { hash } from 'node:crypto';
import type { Issue } from './parse.js';

declare global {
  interface String {
    /** ES2024 (Node ≥ 20): false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
    /** ES2024 (Node ≥ 20): lone surrogates replaced by U+FFFD. */
    toWellFormed(): string;
  }
}

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
 * Depth up to which the fast path recurses. JSON.stringify is recursive too and throws past a
 * few thousand levels, so deeper values are written by the iterative slow path, which takes
 * any depth JSON.parse accepts (there is no depth limit, only the body size limit).
 */
const FAST_PATH_DEPTH = 64;

/** Canonical JSON of a value, or why the value has no faithful canonical JSON. */
export type CanonicalReading = { ok: true; canonical: string } | { ok: false; issue: Issue };

/**
 * Canonical JSON (PROJECTION.md section 1): object keys sorted recursively by code point, no
 * insignificant white space, strings and numbers as `JSON.stringify` writes them, every own key
 * kept (`__proto__` and `constructor` included). `undefined` members are left out, as
 * `JSON.stringify` leaves them out. Not ok when the value holds what canonical JSON cannot write
 * faithfully: a non-finite number (`1e400` parses as Infinity, which would be written `null`),
 * a lone surrogate, a BigInt, a cycle.
 */
export function readCanonicalJson(value: unknown): CanonicalReading {
  const sorted = sortedCopy(value, 0);
  if (sorted !== SLOW) return { ok: true, canonical: JSON.stringify(sorted) ?? 'null' };
  return writeCanonically(value);
}

/** A JSON value that has no faithful canonical JSON (see `readCanonicalJson`). */
export class UnrepresentableJsonError extends Error {
  override name = 'UnrepresentableJsonError';
  constructor(readonly issue: Issue) {
    super(issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`);
  }
}

/** `readCanonicalJson`, throwing `UnrepresentableJsonError` when it is not ok. */
export function canonicalJson(value: unknown): string {
  const reading = readCanonicalJson(value);
  if (!reading.ok) throw new UnrepresentableJsonError(reading.issue);
  return reading.canonical;
}

const SLOW = Symbol('slow');

/**
 * A copy with keys inserted in code-point order, for JSON.stringify to write as is (the fast
 * path), or SLOW for anything JSON.stringify would not write faithfully in that order: an index
 * key, a `__proto__` key (assigning it would set the copy's prototype), a non-finite number, a
 * lone surrogate, more depth than FAST_PATH_DEPTH. The slow path then writes it, or says why not.
 */
function sortedCopy(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.isWellFormed() ? value : SLOW;
  if (typeof value === 'number') return Number.isFinite(value) ? value : SLOW;
  if (value === null || typeof value !== 'object') return value;
  if (depth === FAST_PATH_DEPTH) return SLOW;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = sortedCopy(value[i], depth + 1);
      if (item === SLOW) return SLOW;
      copy[i] = item;
    }
    return copy;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareCodePoints);
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    if (INDEX_KEY.test(key) || key === '__proto__' || !key.isWellFormed()) return SLOW;
    const item = sortedCopy(record[key], depth + 1);
    if (item === SLOW) return SLOW;
    copy[key] = item;
  }
  return copy;
}

type Frame =
  | { array: readonly unknown[]; next: number }
  | { record: Record<string, unknown>; keys: string[]; next: number; written: boolean };

/** Members JSON.stringify leaves out of objects (and writes as null in arrays). */
const isOmitted = (value: unknown) => value === undefined || typeof value === 'function' || typeof value === 'symbol';

/**
 * The slow path: the same text as the fast path, written with an explicit stack instead of
 * recursion, so that no depth overflows the call stack.
 */
function writeCanonically(root: unknown): CanonicalReading {
  let out = '';
  const stack: Frame[] = [];
  const open = new Set<object>();
  const problem = (message: string): CanonicalReading => ({ ok: false, issue: { path: pathOf(stack), message } });
  let value: unknown = root;
  for (;;) {
    // Write `value`, or open it.
    if (value === null || isOmitted(value)) out += 'null';
    else if (typeof value === 'string') {
      if (!value.isWellFormed()) return problem(loneSurrogate(value, 'string'));
      out += JSON.stringify(value);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return problem(`the number is outside the double range (it reads as ${value}, which JSON writes as null)`);
      out += JSON.stringify(value);
    } else if (typeof value === 'boolean') out += value ? 'true' : 'false';
    else if (typeof value === 'bigint') return problem('a BigInt is not a JSON value');
    else {
      const container = value as object;
      if (open.has(container)) return problem('the value contains itself (a cycle)');
      open.add(container);
      if (Array.isArray(container)) {
        out += '[';
        stack.push({ array: container, next: 0 });
      } else {
        out += '{';
        const record = container as Record<string, unknown>;
        stack.push({ record, keys: Object.keys(record).sort(compareCodePoints), next: 0, written: false });
      }
    }
    // Find the next value to write, closing every container that is done.
    for (;;) {
      const frame = stack.at(-1);
      if (frame === undefined) return { ok: true, canonical: out };
      if ('array' in frame) {
        if (frame.next < frame.array.length) {
          if (frame.next > 0) out += ',';
          value = frame.array[frame.next++];
          break;
        }
        out += ']';
        open.delete(frame.array);
      } else {
        while (frame.next < frame.keys.length && isOmitted(frame.record[frame.keys[frame.next]!])) frame.next++;
        if (frame.next < frame.keys.length) {
          const key = frame.keys[frame.next++]!;
          if (!key.isWellFormed()) return problem(loneSurrogate(key, 'key'));
          out += `${frame.written ? ',' : ''}${JSON.stringify(key)}:`;
          frame.written = true;
          value = frame.record[key];
          break;
        }
        out += '}';
        open.delete(frame.record);
      }
      stack.pop();
    }
  }
}

function loneSurrogate(text: string, where: 'string' | 'key'): string {
  const unit = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.exec(text)![0].charCodeAt(0);
  return `the ${where} holds a lone surrogate (U+${unit.toString(16).toUpperCase()}), which UTF-8 cannot carry`;
}

/** Segments of a path shown at each end when it is deeper than twice that: reasons stay short. */
const PATH_ENDS = 8;

/** Where the writer is, as `data.responses[0].answer` (a bad key is part of its own path). */
function pathOf(stack: readonly Frame[]): string {
  const segment = (frame: Frame, first: boolean) =>
    'array' in frame ? `[${frame.next - 1}]` : `${first ? '' : '.'}${frame.keys[frame.next - 1]!.toWellFormed()}`;
  if (stack.length <= 2 * PATH_ENDS) return stack.map((frame, i) => segment(frame, i === 0)).join('');
  const head = stack.slice(0, PATH_ENDS).map((frame, i) => segment(frame, i === 0)).join('');
  const tail = stack.slice(-PATH_ENDS).map((frame) => segment(frame, false)).join('');
  return `${head}…(${stack.length - 2 * PATH_ENDS} more levels)…${tail}`;
}

export interface EnvelopeFields {
  event: unknown;
  timestamp: unknown;
  data: unknown;
}

/** An event's identity, or why its envelope has none (it is then kept under its raw bytes' hash). */
export type IdentityReading = { ok: true; identity: string } | { ok: false; issue: Issue };

/**
 * An event's identity (PROJECTION.md section 1): SHA-256, lowercase hex, of the canonical JSON
 * of its whole envelope, members beyond `{event, timestamp, data}` included. Deliveries that
 * differ only in key order or spacing share it; envelopes that differ as JSON values never do.
 */
export function readIdentity(envelope: EnvelopeFields): IdentityReading {
  const reading = readCanonicalJson(envelope);
  return reading.ok ? { ok: true, identity: hash('sha256', reading.canonical, 'hex') } : reading;
}

/** `readIdentity`, throwing `UnrepresentableJsonError` when the envelope has no identity. */
export function eventIdentity(envelope: EnvelopeFields): string {
  const reading = readIdentity(envelope);
  if (!reading.ok) throw new UnrepresentableJsonError(reading.issue);
  return reading.identity;
}

/** SHA-256, lowercase hex, of exact bytes: the identity of a body that is not an event. */
export function rawIdentity(raw: Uint8Array): string {
  return hash('sha256', raw, 'hex');
}
