// The retention of the feed's changes (docs/changes.md), written once for both engines: per
// account, the prefix of changes recorded before a time is dropped, a bounded number a call, and
// `dropped_through` notes where it ends (never lowered: two replicas may prune at once). A change
// a destination of the account still needs is kept, and every change after it: one queued or set
// aside (dead) for it, or not yet looked at (after its cursor). So nothing queued is lost while a
// destination is paused, disabled or failing for longer than the retention; removing the
// destination lets the retention go on. An operational destination (it receives operator events,
// its cursor and queue are theirs) holds no change.
import type { EngineWrites } from './rebuild-changes.js';

/** The lowest seq a destination of the account still needs, or undefined when none needs any. */
async function heldFrom(sql: EngineWrites, account: string): Promise<number | undefined> {
  const p = (n: number) => sql.placeholder(n);
  // Per destination, its lowest queued seq by the primary key: a lookup each, however long the queues.
  const [held] = await sql.rows<{ held: number | string | null }>(
    `SELECT MIN(held) AS held FROM (
       SELECT COALESCE(
         (SELECT MIN(seq) FROM destination_deliveries q WHERE q.account = d.account AND q.destination = d.destination),
         d.cursor + 1) AS held
       FROM destinations d WHERE d.account = ${p(1)} AND d.kind = 'changes') AS needs`,
    [account],
  );
  return held?.held === null || held === undefined ? undefined : Number(held.held);
}

/** Drops up to `limit` changes recorded before `before` (ISO 8601), oldest first per account; how many. */
export async function pruneChanges(sql: EngineWrites, before: string, limit: number): Promise<number> {
  const p = (n: number) => sql.placeholder(n);
  const heads = await sql.rows<{ account: string; dropped_through: number | string }>(
    'SELECT account, dropped_through FROM change_heads',
    [],
  );
  let dropped = 0;
  for (const head of heads) {
    if (dropped >= limit) break;
    const { account } = head;
    const held = await heldFrom(sql, account);
    const oldest = await sql.rows<{ seq: number | string; at: string }>(
      `SELECT seq, at FROM changes WHERE account = ${p(1)} AND seq > ${p(2)} ORDER BY seq LIMIT ${p(3)}`,
      [account, Number(head.dropped_through), limit - dropped],
    );
    // Only the prefix: a change recorded since stops it, even if an older one follows (clocks);
    // and a change a destination needs.
    const end = oldest.findIndex((change) => change.at >= before || (held !== undefined && Number(change.seq) >= held));
    const prefix = end === -1 ? oldest : oldest.slice(0, end);
    const through = prefix.at(-1)?.seq;
    if (through === undefined) continue;
    await sql.run(`DELETE FROM changes WHERE account = ${p(1)} AND seq <= ${p(2)}`, [account, Number(through)]);
    await sql.run(
      `UPDATE change_heads SET dropped_through = CASE WHEN dropped_through < ${p(1)} THEN ${p(2)} ELSE dropped_through END
       WHERE account = ${p(3)}`,
      [Number(through), Number(through), account],
    );
    dropped += prefix.length;
  }
  return dropped;
}
