// Inbox intake: deliveries stored as they arrive (the receiver), or already processed (replay),
// each under the account it was sent to; identity is per account.
import type { Delivery } from '../../receive/delivery.js';
import type { Appended, IdentityKey, SettledDelivery } from '../rows.js';
import { storedBody } from '../bodies.js';
import { identityBytes, identityText } from '../identities.js';
import { handlerKeyBytes } from '../handler-keys.js';
import { query, type Session } from './session.js';

// A delivery is known, within its account, by its identity, or (not an event) by its raw-bytes hash.
const keyOf = (account: string, identity: string | null, raw: string | null | undefined) =>
  identity !== null ? `${account} e:${identity}` : raw ? `${account} r:${raw}` : null;

/**
 * Inserts deliveries, each under its own account; one whose identity (or raw-bytes hash) its
 * account has stored already, or earlier in the batch, is a duplicate.
 */
export async function appendDeliveries(tx: Session, deliveries: readonly Delivery[]): Promise<Appended[]> {
  if (deliveries.length === 0) return [];
  // One statement for the batch. Rows are inserted in the batch's order (ORDER BY ord), so
  // their ids increase in that order: the returned ids, sorted, belong to the deliveries
  // that were inserted, in turn. A body with no identity never conflicts.
  const bodies = deliveries.map((d) => storedBody(d.raw));
  const inserted = await query<{ inbox_id: number; account: string; identity: Buffer | null; raw_sha256: string | null }>(
    tx,
    `INSERT INTO inbox (account, received_at, raw, codec, campaign_id, identity, event_at, raw_sha256, kind, verdict, secret_id, state, reasons,
       handler_key, trace_context)
     SELECT a, r, b, c, ci, i, ea, h, k, v, s, st, re, hk, tc
     FROM unnest($13::text[], $1::timestamptz[], $2::bytea[], $14::integer[], $15::text[], $3::bytea[], $12::bigint[], $4::text[], $5::text[],
                 $6::text[], $7::text[], $8::text[], $9::text[], $10::bytea[], $11::text[])
       WITH ORDINALITY AS d(a, r, b, c, ci, i, ea, h, k, v, s, st, re, hk, tc, ord)
     -- A dated event stored before migration 11 is filed undated: the unique index cannot see it.
     WHERE ea IS NULL OR NOT EXISTS (SELECT 1 FROM inbox x WHERE x.account = d.a AND x.identity = d.i AND x.event_at IS NULL)
     ORDER BY ord
     ON CONFLICT DO NOTHING
     RETURNING inbox_id, account, identity, raw_sha256`,
    [
      deliveries.map((d) => d.receivedAt),
      bodies.map((b) => b.bytes),
      deliveries.map((d) => identityBytes(d.identity)),
      deliveries.map((d) => d.rawSha256 ?? null),
      deliveries.map((d) => d.kind),
      deliveries.map((d) => d.verdict),
      deliveries.map((d) => d.secretId),
      deliveries.map((d) => (d.verdict === 'accepted' ? 'pending' : 'dead')),
      deliveries.map((d) => (d.reasons === null ? null : JSON.stringify(d.reasons))),
      deliveries.map((d) => handlerKeyBytes(d.handlerKey)),
      deliveries.map((d) => d.traceContext ?? null),
      deliveries.map((d) => (d.identity === null ? null : d.eventAt)),
      deliveries.map((d) => d.account),
      bodies.map((b) => b.codec),
      deliveries.map((d) => d.campaignId ?? null),
    ],
  );
  const fresh = new Set(
    inserted.map((r) => keyOf(r.account, identityText(r.identity), r.raw_sha256)).filter((k): k is string => k !== null),
  );
  const ids = inserted.map((r) => r.inbox_id).sort((x, y) => x - y);
  let next = 0;
  return deliveries.map((d): Appended => {
    // The first delivery of a key in the batch took the row; any later one is a duplicate.
    const key = keyOf(d.account, d.identity, d.rawSha256);
    if (key !== null && !fresh.delete(key)) return { inboxId: null, duplicate: true };
    return { inboxId: ids[next++]!, duplicate: false };
  });
}

/**
 * Which of these identities the account has stored already: dated under their instant, or undated
 * (no instant, or stored before migration 11).
 */
export async function knownIdentities(tx: Session, account: string, keys: readonly IdentityKey[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const dated = keys.filter((k) => k.eventAt !== null);
  const rows = await query<{ identity: Buffer }>(
    tx,
    `SELECT x.identity FROM inbox x JOIN unnest($1::bigint[], $2::bytea[]) AS k(ea, i) ON x.account = $4 AND x.event_at = k.ea AND x.identity = k.i
     UNION ALL
     SELECT identity FROM inbox WHERE account = $4 AND identity = ANY($3::bytea[]) AND event_at IS NULL`,
    [dated.map((k) => k.eventAt), dated.map((k) => identityBytes(k.identity)), keys.map((k) => identityBytes(k.identity)), account],
  );
  return new Set(rows.map((r) => identityText(r.identity)!));
}

/** Inserts deliveries already processed (replay), each under its own account, in one statement; the caller checked `knownIdentities`. */
export async function appendSettled(tx: Session, rows: readonly SettledDelivery[], at: string): Promise<void> {
  if (rows.length === 0) return;
  const bodies = rows.map((r) => storedBody(r.delivery.raw));
  await query(
    tx,
    `INSERT INTO inbox (account, received_at, raw, codec, campaign_id, identity, event_at, kind, verdict, secret_id, state, reasons, processed_at,
       handlers_pending, handler_key, attempts)
     SELECT a, r, b, c, ci, i, ea, k, 'accepted', s, st, re, $10::timestamptz, h, hk, 1
     FROM unnest($12::text[], $1::timestamptz[], $2::bytea[], $13::integer[], $14::text[], $3::bytea[], $11::bigint[], $4::text[], $5::text[],
                 $6::text[], $7::text[], $8::boolean[], $9::bytea[])
       AS v(a, r, b, c, ci, i, ea, k, s, st, re, h, hk)`,
    [
      rows.map((r) => r.delivery.receivedAt),
      bodies.map((b) => b.bytes),
      rows.map((r) => identityBytes(r.delivery.identity)),
      rows.map((r) => r.delivery.kind),
      rows.map((r) => r.delivery.secretId),
      rows.map((r) => r.state),
      rows.map((r) => (r.reasons === null ? null : JSON.stringify(r.reasons))),
      rows.map((r) => r.handlers),
      rows.map((r) => handlerKeyBytes(r.delivery.handlerKey)),
      at,
      rows.map((r) => r.delivery.eventAt),
      rows.map((r) => r.delivery.account),
      bodies.map((b) => b.codec),
      rows.map((r) => r.delivery.campaignId ?? null),
    ],
  );
}
