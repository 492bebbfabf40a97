/** The word that agrees with a count: `agreed(1, 'matches', 'match')` is `matches`. */
export function agreed(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

/** A count and its noun: "1 row", "2 rows", "0 rows"; give the plural when it is not noun + s. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${agreed(n, noun, plural)}`;
}
