// The upgrade of an inbox stored before bodies were compressed (migration 24): each row's body
// rewritten in the compact form (../bodies.ts), with its campaign, a batch a transaction, in inbox
// order. The rows left are those with no codec (the partial index inbox_uncompacted holds them),
// so a run cut short resumes where it stopped, and a finished one costs one look at an empty index.
// The connection overwrites what it deletes (secure_delete), so no old body stays in free pages.
import { compactedRow } from '../bodies.js';
import type Database from 'better-sqlite3';

const BATCH = 2_000;

/** Rewrites every row not yet compact; returns how many it rewrote. */
export function compactBodies(db: Database.Database, batch: number = BATCH): number {
  const next = db.prepare<[number], { inbox_id: number; raw: Buffer; verdict: string }>(
    `SELECT inbox_id, raw, verdict FROM inbox WHERE codec IS NULL ORDER BY inbox_id LIMIT ?`,
  );
  const write = db.prepare('UPDATE inbox SET raw = ?, codec = ?, campaign_id = ? WHERE inbox_id = ? AND codec IS NULL');
  const step = db.transaction(() => {
    const rows = next.all(batch);
    for (const row of rows) {
      const compact = compactedRow(row.raw, row.verdict);
      write.run(compact.bytes, compact.codec, compact.campaignId, row.inbox_id);
    }
    return rows.length;
  });
  let rewritten = 0;
  for (let n = step.immediate(); n > 0; n = step.immediate()) rewritten += n;
  return rewritten;
}
