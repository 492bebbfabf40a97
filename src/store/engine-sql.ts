// A read in an engine's own SQL, for the queries written once for both engines (src/store/people.ts,
// src/store/projected.ts, src/store/erasure-rows.ts): each driver gets its own placeholders. Those
// reads are of one account, bound as their first parameter; a `?` is positional, so a statement
// binds a value once per placeholder, never by number twice.

export interface EngineSql {
  /** The n-th placeholder (from 1) as the driver takes it: `?` for better-sqlite3, `$n` for pg. */
  placeholder(n: number): string;
  /** The rows of a read, in the caller's transaction or not; synchronous on SQLite inside one. */
  rows<T>(sql: string, parameters: readonly unknown[]): T[] | Promise<T[]>;
  /** SQLite's: what a lookup by handler key ANDs to probe its index's blocks (`KEY_BLOCKS_SQL`). */
  keyBlocks?: string;
}

/** ` AND ` the engine's condition for a lookup by handler key, or nothing. */
export function andKeyBlocks(sql: { keyBlocks?: string | undefined }): string {
  return sql.keyBlocks === undefined ? '' : ` AND ${sql.keyBlocks}`;
}

/** `count` placeholders from the n-th on, comma-separated (a list for IN). */
export function placeholders(sql: EngineSql, count: number, from = 1): string {
  return Array.from({ length: count }, (_, i) => sql.placeholder(from + i)).join(', ');
}
