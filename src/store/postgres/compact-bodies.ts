// The upgrade of an inbox stored before bodies were compressed (migration 23): each row's body
// rewritten in the compact form (../bodies.ts), with its campaign, a batch a transaction, in inbox
// order up to the last row the migration found. Each batch commits with its progress (the setting
// compact_bodies, which the migration wrote and the last batch removes), locked for the batch, so
// replicas starting together take turns, a run cut short resumes where it stopped, and a finished
// one costs one look at the settings. No index names the columns rewritten: each update is a
// heap-only tuple. The old row versions are dead tuples until VACUUM (autovacuum) reclaims them.
import { compactedRow } from '../compacted-row.js';
import type { PoolClient } from './connection.js';

const BATCH = 2_000;
const PROGRESS = 'compact_bodies';

interface Progress {
  after: number;
  last: number;
}

/** One batch, with its progress: how many rows it rewrote, or null once none is left. */
async function step(client: PoolClient, batch: number): Promise<number | null> {
  await client.query('BEGIN');
  try {
    const found = await client.query<{ value: string }>('SELECT value FROM settings WHERE key = $1 FOR UPDATE', [PROGRESS]);
    const value = found.rows[0]?.value;
    if (value === undefined) {
      await client.query('COMMIT');
      return null;
    }
    const { after, last } = JSON.parse(value) as Progress;
    const { rows } = await client.query<{ inbox_id: string; raw: Buffer; verdict: string }>(
      'SELECT inbox_id, raw, verdict FROM inbox WHERE inbox_id > $1 AND inbox_id <= $2 AND codec IS NULL ORDER BY inbox_id LIMIT $3',
      [after, last, batch],
    );
    const compact = rows.map((row) => compactedRow(row.raw, row.verdict));
    await client.query(
      `UPDATE inbox SET raw = v.raw, codec = v.codec, campaign_id = v.campaign_id
       FROM unnest($1::bigint[], $2::bytea[], $3::integer[], $4::text[]) AS v(inbox_id, raw, codec, campaign_id)
       WHERE inbox.inbox_id = v.inbox_id AND inbox.codec IS NULL`,
      [rows.map((r) => r.inbox_id), compact.map((c) => c.bytes), compact.map((c) => c.codec), compact.map((c) => c.campaignId)],
    );
    if (rows.length < batch) await client.query('DELETE FROM settings WHERE key = $1', [PROGRESS]);
    else {
      await client.query('UPDATE settings SET value = $1, updated_at = now() WHERE key = $2', [
        JSON.stringify({ after: Number(rows.at(-1)!.inbox_id), last }),
        PROGRESS,
      ]);
    }
    await client.query('COMMIT');
    return rows.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Rewrites every row not yet compact; returns how many it rewrote. */
export async function compactBodies(client: PoolClient, batch: number = BATCH): Promise<number> {
  let rewritten = 0;
  for (let n = await step(client, batch); n !== null; n = await step(client, batch)) rewritten += n;
  return rewritten;
}
