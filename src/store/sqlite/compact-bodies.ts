// The upgrade of an inbox stored before bodies were compressed (migration 24): each row's body
// rewritten in the compact form (../bodies.ts), with its campaign, a batch a transaction, in inbox
// order up to the last row the migration found. Each batch commits with its progress (the setting
// compact_bodies, which the migration wrote and the last batch removes), so a run cut short
// resumes where it stopped, and a finished one costs one look at the settings. The connection
// overwrites what it deletes (secure_delete), so no old body stays in free pages.
import type Database from 'better-sqlite3';
import { compactedRow } from '../compacted-row.js';

const BATCH = 2_000;
const PROGRESS = 'compact_bodies';

interface Progress {
  after: number;
  last: number;
}

/** Rewrites every row not yet compact; returns how many it rewrote. */
export function compactBodies(db: Database.Database, batch: number = BATCH): number {
  const progress = db.prepare<[string], string>('SELECT value FROM settings WHERE key = ?').pluck();
  const next = db.prepare<[number, number], { inbox_id: number; raw: Buffer; verdict: string }>(
    `SELECT inbox_id, raw, verdict FROM inbox WHERE inbox_id > ? AND inbox_id <= ? AND codec IS NULL ORDER BY inbox_id LIMIT ${Math.trunc(batch)}`,
  );
  const write = db.prepare('UPDATE inbox SET raw = ?, codec = ?, campaign_id = ? WHERE inbox_id = ? AND codec IS NULL');
  const advance = db.prepare("UPDATE settings SET value = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE key = ?");
  const done = db.prepare('DELETE FROM settings WHERE key = ?');
  // One batch: how many rows it rewrote, or null once none is left.
  const step = db.transaction((): number | null => {
    const value = progress.get(PROGRESS);
    if (value === undefined) return null;
    const { after, last } = JSON.parse(value) as Progress;
    const rows = next.all(after, last);
    for (const row of rows) {
      const compact = compactedRow(row.raw, row.verdict);
      write.run(compact.bytes, compact.codec, compact.campaignId, row.inbox_id);
    }
    if (rows.length < batch) done.run(PROGRESS);
    else advance.run(JSON.stringify({ after: rows.at(-1)!.inbox_id, last }), PROGRESS);
    return rows.length;
  });
  let rewritten = 0;
  for (let n = step.immediate(); n !== null; n = step.immediate()) rewritten += n;
  return rewritten;
}
