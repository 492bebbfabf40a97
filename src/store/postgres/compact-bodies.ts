// The upgrade of an inbox stored before bodies were compressed (migration 23): each row's body
// rewritten in the compact form (../bodies.ts), with its campaign, a batch a transaction, in inbox
// order. The rows left are those with no codec (the partial index inbox_uncompacted holds them),
// so a run cut short resumes where it stopped, and replicas starting together each take rows the
// other has not locked. The old row versions are dead tuples until VACUUM (autovacuum) reclaims them.
import { compactedRow } from '../bodies.js';
import type { PoolClient } from './connection.js';

const BATCH = 2_000;

async function step(client: PoolClient, batch: number): Promise<number> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ inbox_id: string; raw: Buffer; verdict: string }>(
      'SELECT inbox_id, raw, verdict FROM inbox WHERE codec IS NULL ORDER BY inbox_id LIMIT $1 FOR UPDATE SKIP LOCKED',
      [batch],
    );
    const compact = rows.map((row) => compactedRow(row.raw, row.verdict));
    await client.query(
      `UPDATE inbox SET raw = v.raw, codec = v.codec, campaign_id = v.campaign_id
       FROM unnest($1::bigint[], $2::bytea[], $3::integer[], $4::text[]) AS v(inbox_id, raw, codec, campaign_id)
       WHERE inbox.inbox_id = v.inbox_id AND inbox.codec IS NULL`,
      [rows.map((r) => r.inbox_id), compact.map((c) => c.bytes), compact.map((c) => c.codec), compact.map((c) => c.campaignId)],
    );
    await client.query('COMMIT');
    return rows.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Rewrites every row not yet compact (those another connection holds locked are left to it); returns how many it rewrote. */
export async function compactBodies(client: PoolClient, batch: number = BATCH): Promise<number> {
  let rewritten = 0;
  for (let n = await step(client, batch); n > 0; n = await step(client, batch)) rewritten += n;
  return rewritten;
}
