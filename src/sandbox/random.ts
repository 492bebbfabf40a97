import { createHash } from 'node:crypto';

/** A seeded source of randomness: the same seed and label give the same draws, run after run. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** A whole number in [0, n). */
  int(n: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A version-4-shaped UUID. */
  uuid(): string;
  /** `length` characters of [A-Za-z0-9]. */
  token(length: number): string;
  /** An independent stream for one purpose (a candidate, the faults), so that draws elsewhere do not shift it. */
  derive(label: string): Random;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** sfc32, seeded from the SHA-256 of `seed`: small, fast, and good enough for simulated outcomes. */
export function createRandom(seed: string): Random {
  const words = createHash('sha256').update(seed).digest();
  let a = words.readUInt32LE(0);
  let b = words.readUInt32LE(4);
  let c = words.readUInt32LE(8);
  let d = words.readUInt32LE(12);
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    chance: (p) => p > 0 && next() < p,
    pick: (items) => items[int(items.length)]!,
    uuid() {
      const hex = Array.from({ length: 32 }, () => int(16).toString(16));
      hex[12] = '4';
      hex[16] = (8 + int(4)).toString(16);
      const s = hex.join('');
      return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
    },
    token: (length) => Array.from({ length }, () => ALPHABET[int(ALPHABET.length)]).join(''),
    derive: (label) => createRandom(`${seed}\u0000${label}`),
  };
}
