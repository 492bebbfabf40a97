// Small statistics for the report.
import type { Distribution } from './types.js';

export function median(values: readonly number[]): number | null {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return null;
  return n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
}

export function distribution(values: ArrayLike<number> & Iterable<number>): Distribution {
  if (values.length === 0) return { count: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return { count: sorted.length, p50: at(50), p90: at(90), p99: at(99), max: sorted[sorted.length - 1]! };
}

export const round = (x: number | null | undefined, digits = 1): number | null =>
  x === null || x === undefined || Number.isNaN(x) ? null : Math.round(x * 10 ** digits) / 10 ** digits;
