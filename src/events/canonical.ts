// Canonical JSON (docs/projection.md section 1), the text an event's identity hashes. Internal: the
// public functions are in identity.ts; parse.ts calls `hashCanonicalJson` on parsed bodies.
import { hash } from 'node:crypto';
import type { Issue } from './issue.js';

declare global {
  interface String {
    /** ES2024 (Node ≥ 20): false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
    /** ES2024 (Node ≥ 20): lone surrogates replaced by U+FFFD. */
    toWellFormed(): string;
  }
}

// Code-point order, as docs/projection.md asks. JavaScript's `<` compares UTF-16 code units, which
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

/** Canonical JSON as text (fast path) or as its UTF-8 bytes (slow path): SHA-256 takes either. */
export type Written = { ok: true; canonical: string | Buffer } | { ok: false; issue: Issue };

/**
 * `parsed`: the value comes straight from JSON.parse, which cannot build a cycle, so the slow
 * path skips its cycle check (most of the cost of a deep body). Never set it for values built
 * in memory: a cycle would then be written without end.
 */
export function writeCanonicalJson(value: unknown, parsed: boolean): Written {
  const sorted = sortedCopy(value, 0);
  if (sorted !== SLOW) return { ok: true, canonical: JSON.stringify(sorted) ?? 'null' };
  return writeCanonically(value, parsed);
}

/** SHA-256 (lowercase hex) of the canonical JSON of a value, or why it has none. */
export function hashCanonicalJson(value: unknown, parsed: boolean): { ok: true; sha256: string } | { ok: false; issue: Issue } {
  const written = writeCanonicalJson(value, parsed);
  return written.ok ? { ok: true, sha256: hash('sha256', written.canonical, 'hex') } : written;
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
    // The first character screens out almost every key before the costlier tests.
    const first = key.charCodeAt(0);
    if ((first <= 0x39 && INDEX_KEY.test(key)) || (first === 0x5f && key === '__proto__') || !key.isWellFormed()) return SLOW;
    const item = sortedCopy(record[key], depth + 1);
    if (item === SLOW) return SLOW;
    copy[key] = item;
  }
  return copy;
}

/** Members JSON.stringify leaves out of objects (and writes as null in arrays). */
const isOmitted = (value: unknown) => value === undefined || typeof value === 'function' || typeof value === 'symbol';

/**
 * Depth from which the slow path watches for cycles in values built in memory (JSON.parse
 * cannot build one): a cycle repeats without end, so it is still found.
 */
const CYCLE_CHECK_DEPTH = 256;

const [COMMA, COLON, OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [0x2c, 0x3a, 0x5b, 0x5d, 0x7b, 0x7d];

/** The containers being written, as parallel arrays (cheaper than a frame object per level). */
interface Stack {
  containers: unknown[];
  /** An object's members to write, in code-point order; null for an array. */
  keys: Array<string[] | null>;
  /** Index of the next item or member to write. */
  next: number[];
}

/**
 * The slow path: the same text as the fast path, written with an explicit stack instead of
 * recursion, so that no depth overflows the call stack, straight into UTF-8 bytes (building a
 * string one bracket at a time cost three times as much on deep values).
 *
 * One piece on purpose (over 80 lines): its byte writers share one growing buffer and its length
 * as local variables, and the explicit stack replaces recursion; split, they would pass that state
 * at every byte.
 */
function writeCanonically(root: unknown, parsed: boolean): Written {
  let out = Buffer.allocUnsafe(4096);
  let length = 0;
  const room = (bytes: number) => {
    if (length + bytes <= out.length) return;
    const larger = Buffer.allocUnsafe(Math.max(out.length * 2, length + bytes));
    out.copy(larger, 0, 0, length);
    out = larger;
  };
  const byte = (b: number) => {
    room(1);
    out[length++] = b;
  };
  const text = (t: string) => {
    room(t.length * 3); // UTF-8 takes at most 3 bytes per UTF-16 unit
    length += out.write(t, length, 'utf8');
  };

  const stack: Stack = { containers: [], keys: [], next: [] };
  const open = new Set<object>();
  const problem = (message: string): Written => ({ ok: false, issue: { path: pathOf(stack), message } });
  let value: unknown = root;
  for (;;) {
    // Write `value`, or open it.
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return problem(loneSurrogate(value, 'string'));
      text(JSON.stringify(value));
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value))
        return problem(`the number is outside the double range (it reads as ${value}, which JSON writes as null)`);
      text(JSON.stringify(value));
    } else if (value === null || isOmitted(value)) text('null');
    else if (typeof value === 'boolean') text(value ? 'true' : 'false');
    else if (typeof value === 'bigint') return problem('a BigInt is not a JSON value');
    else {
      if (!parsed && stack.containers.length >= CYCLE_CHECK_DEPTH) {
        if (open.has(value)) return problem('the value contains itself (a cycle)');
        open.add(value);
      }
      stack.containers.push(value);
      stack.next.push(0);
      if (Array.isArray(value)) {
        byte(OPEN_ARRAY);
        stack.keys.push(null);
      } else {
        byte(OPEN_OBJECT);
        const record = value as Record<string, unknown>;
        stack.keys.push(
          Object.keys(record)
            .filter((key) => !isOmitted(record[key]))
            .sort(compareCodePoints),
        );
      }
    }
    // Find the next value to write, closing every container that is done.
    for (;;) {
      const top = stack.containers.length - 1;
      if (top < 0) return { ok: true, canonical: out.subarray(0, length) };
      const container = stack.containers[top]!;
      const keys = stack.keys[top]!;
      const next = stack.next[top]!;
      if (keys === null) {
        const array = container as unknown[];
        if (next < array.length) {
          if (next > 0) byte(COMMA);
          stack.next[top] = next + 1;
          value = array[next];
          break;
        }
        byte(CLOSE_ARRAY);
      } else {
        if (next < keys.length) {
          const key = keys[next]!;
          if (next > 0) byte(COMMA);
          stack.next[top] = next + 1;
          if (!key.isWellFormed()) return problem(loneSurrogate(key, 'key'));
          text(JSON.stringify(key));
          byte(COLON);
          value = (container as Record<string, unknown>)[key];
          break;
        }
        byte(CLOSE_OBJECT);
      }
      if (!parsed && top >= CYCLE_CHECK_DEPTH) open.delete(container);
      stack.containers.pop();
      stack.keys.pop();
      stack.next.pop();
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
function pathOf(stack: Stack): string {
  const depth = stack.containers.length;
  const segment = (level: number) => {
    const keys = stack.keys[level]!;
    const index = stack.next[level]! - 1;
    return keys === null ? `[${index}]` : `${level === 0 ? '' : '.'}${keys[index]!.toWellFormed()}`;
  };
  const levels = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => segment(from + i)).join('');
  if (depth <= 2 * PATH_ENDS) return levels(0, depth);
  return `${levels(0, PATH_ENDS)}…(${depth - 2 * PATH_ENDS} more levels)…${levels(depth - PATH_ENDS, depth)}`;
}
