// A page of the feed bounded by the bytes of its changes as well as by their number (what a
// follower holds at once, docs/changes.md), written once for both engines: the sizes of the next
// changes are read first, then the changes through the last that fits. octet_length gives a
// value's stored length without reading the value (SQLite 3.43 and later, PostgreSQL), so a long
// row left out of the page is not read for it.
import type { EngineSql } from './engine-sql.js';

/** The `seq` and size in bytes (row and events as stored) of up to `limit` changes after a cursor; binds account, after, limit. */
export function changeSizesSql(sql: Pick<EngineSql, 'placeholder'>): string {
  const p = (n: number) => sql.placeholder(n);
  return `SELECT seq, COALESCE(octet_length(row), 0) + octet_length(events) AS bytes
          FROM changes WHERE account = ${p(1)} AND seq > ${p(2)} ORDER BY seq LIMIT ${p(3)}`;
}

/**
 * The last `seq` of a page of about `maxBytes`: the changes in order until their sizes reach it
 * (the one that reaches it included, so a page holds one change at least); undefined for none.
 */
export function pageEnd(sizes: ReadonlyArray<{ seq: number | string; bytes: number | string }>, maxBytes: number): number | undefined {
  let total = 0;
  let end: number | undefined;
  for (const size of sizes) {
    if (total >= maxBytes) break;
    total += Number(size.bytes);
    end = Number(size.seq);
  }
  return end;
}
