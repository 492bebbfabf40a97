// The inbox's intake and claims: deliveries appended as they arrive (or already settled, by a
// replay), which identities are stored already, the pending rows a projection batch takes, and
// set-aside rows put back to pending. Each delivery is written under its own account, whose
// identities alone it is checked against; reads and claims are of the account a statement binds.
import type { Statement } from 'better-sqlite3';
import type { Delivery } from '../../receive/delivery.js';
import type { Appended, IdentityKey, InboxRow, SettledDelivery } from '../rows.js';
import type { InboxState } from '../inbox-state.js';
import type { SqliteDatabase } from './database.js';
import { bodyOf, storedBody, type StoredBody } from '../bodies.js';
import { identityBytes, identityText } from '../identities.js';
import { handlerKeyBytes } from '../handler-keys.js';
import { instantMs, instantText } from '../instants.js';

const INBOX_COLUMNS = [
  'inbox_id',
  'account',
  'received_at',
  'raw',
  'identity',
  'raw_sha256',
  'kind',
  'verdict',
  'secret_id',
  'state',
  'reasons',
  'attempts',
  'processed_at',
  'handlers_pending',
  'trace_context',
  'codec',
] as const;

export const INBOX_SELECT = `SELECT ${INBOX_COLUMNS.join(', ')} FROM inbox`;

/**
 * An inbox row read as an array (`INBOX_SELECT` by a statement in raw mode), as every read of the
 * inbox's rows takes them: better-sqlite3 builds a row object column by column through V8's API, which costs
 * about twice an array and this literal (10 against 6 µs a row of these fifteen columns, measured on
 * the bench machine).
 */
export function inboxRowOf(values: unknown[]): InboxRow {
  return {
    inbox_id: values[0] as number,
    account: values[1] as string,
    received_at: instantText(values[2])!,
    raw: bodyOf(values[15] as number | null, values[3] as Buffer),
    identity: identityText(values[4]),
    raw_sha256: values[5] as string | null,
    kind: values[6] as string | null,
    verdict: values[7] as InboxRow['verdict'],
    secret_id: values[8] as string | null,
    state: values[9] as InboxState,
    reasons: values[10] as string | null,
    attempts: values[11] as number,
    processed_at: instantText(values[12]),
    handlers_pending: values[13] === 1,
    trace_context: values[14] as string | null,
  };
}

type InsertParameters = [
  string,
  number | string,
  Uint8Array,
  number,
  string | null,
  Buffer | string | null,
  number | null,
  string | null,
  string | null,
  Buffer | null,
  string,
  string | null,
  InboxState,
  string | null,
  string | null,
];

export interface InboxStatements {
  /** For the claims' statements, prepared per limit. */
  db: SqliteDatabase;
  insert: Statement<InsertParameters, { inbox_id: number }>;
  insertSettled: Statement;
  byDatedIdentity: Statement<[string, number, Buffer | string]>;
  byUndatedIdentity: Statement<[string, Buffer | string]>;
  /**
   * Whether rows stored before migration 12 (undated, whatever their timestamp) may hold an
   * identity that now arrives dated. Known when the store opens: no new row is ever filed so.
   */
  undatedEvents: boolean;
  /** Raw mode (arrays): `inboxRowOf`. */
  pendingByLimit: Map<number, Statement<[string], unknown[]>>;
  /** Raw mode (arrays): `inboxRowOf`. */
  pendingById: Statement<[number], unknown[]>;
  requeue: Statement;
}

export function prepareInbox(db: SqliteDatabase): InboxStatements {
  return {
    db,
    // No conflict target: a second delivery of an event (same identity) and a retried bad body
    // (same raw_sha256) are both duplicates; the two columns never hold each other's hashes.
    insert: db.prepare<InsertParameters, { inbox_id: number }>(
      `INSERT INTO inbox (account, received_at, raw, codec, campaign_id, identity, event_at, raw_sha256, kind, handler_key, verdict, secret_id,
       state, reasons, trace_context)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING
     RETURNING inbox_id`,
    ),
    insertSettled: db.prepare(
      `INSERT INTO inbox (account, received_at, raw, codec, campaign_id, identity, event_at, kind, verdict, secret_id, state, reasons, processed_at,
       handlers_pending, handler_key, attempts)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'accepted', ?, ?, ?, ?, ?, ?, 1)`,
    ),
    byDatedIdentity: db.prepare<[string, number, Buffer | string]>(
      'SELECT 1 FROM inbox WHERE account = ? AND event_at = ? AND identity = ?',
    ),
    byUndatedIdentity: db.prepare<[string, Buffer | string]>('SELECT 1 FROM inbox WHERE account = ? AND identity = ? AND event_at IS NULL'),
    undatedEvents:
      db
        .prepare(`SELECT EXISTS (SELECT 1 FROM inbox WHERE identity IS NOT NULL AND event_at IS NULL AND verdict = 'accepted')`)
        .pluck()
        .get() === 1,
    // The limit is written into the SQL: a bound LIMIT made SQLite re-prepare the statement on
    // every call (29.5 us against 4.2 us in the bench's profile). Callers use a few limits only.
    pendingByLimit: new Map<number, Statement<[string], unknown[]>>(),
    pendingById: db.prepare<[number], unknown[]>(`${INBOX_SELECT} WHERE inbox_id = ? AND state = 'pending'`).raw(true),
    requeue: db.prepare(
      `UPDATE inbox SET state = 'pending' WHERE inbox_id = ? AND account = ? AND state IN ('unknown', 'dead') AND verdict = 'accepted'`,
    ),
  };
}

/** Inserts a delivery: pending if accepted, dead otherwise; a duplicate inserts nothing. `stored`: its body's stored form, if made ahead. */
export function append(s: InboxStatements, d: Delivery, stored?: StoredBody): Appended {
  if (storedUndated(s, d.account, d)) return { inboxId: null, duplicate: true };
  const state: InboxState = d.verdict === 'accepted' ? 'pending' : 'dead';
  const body = stored ?? storedBody(d.raw);
  const row = s.insert.get(
    d.account,
    instantMs(d.receivedAt),
    body.bytes,
    body.codec,
    d.campaignId ?? null,
    identityBytes(d.identity),
    d.identity === null ? null : d.eventAt,
    d.rawSha256 ?? null,
    d.kind,
    handlerKeyBytes(d.handlerKey),
    d.verdict,
    d.secretId,
    state,
    d.reasons === null ? null : JSON.stringify(d.reasons),
    d.traceContext ?? null,
  );
  return row === undefined ? { inboxId: null, duplicate: true } : { inboxId: row.inbox_id, duplicate: false };
}

export function appendAll(s: InboxStatements, deliveries: readonly Delivery[]): Appended[] {
  return deliveries.map((d) => append(s, d));
}

/** A dated identity the inbox holds from before migration 12, filed undated: the unique index cannot see it. */
function storedUndated(s: InboxStatements, account: string, key: { identity: string | null; eventAt: number | null }): boolean {
  return (
    s.undatedEvents &&
    key.identity !== null &&
    key.eventAt !== null &&
    s.byUndatedIdentity.get(account, identityBytes(key.identity)) !== undefined
  );
}

function isStored(s: InboxStatements, account: string, key: IdentityKey): boolean {
  if (key.eventAt === null) return s.byUndatedIdentity.get(account, identityBytes(key.identity)) !== undefined;
  return s.byDatedIdentity.get(account, key.eventAt, identityBytes(key.identity)) !== undefined || storedUndated(s, account, key);
}

/** Which of these identities the account has stored already. */
export function known(s: InboxStatements, account: string, keys: readonly IdentityKey[]): Set<string> {
  return new Set(keys.filter((key) => isStored(s, account, key)).map((key) => key.identity));
}

/** Inserts a delivery already processed (replay); returns its inbox id. `stored`: its body's stored form, if made ahead. */
export function appendSettled(s: InboxStatements, r: SettledDelivery, at: string, stored?: StoredBody): number {
  const d = r.delivery;
  const body = stored ?? storedBody(d.raw);
  return Number(
    s.insertSettled.run(
      d.account,
      instantMs(d.receivedAt),
      body.bytes,
      body.codec,
      d.campaignId ?? null,
      identityBytes(d.identity),
      d.eventAt,
      d.kind,
      d.secretId,
      r.state,
      r.reasons === null ? null : JSON.stringify(r.reasons),
      instantMs(at),
      r.handlers ? 1 : 0,
      handlerKeyBytes(d.handlerKey),
    ).lastInsertRowid,
  );
}

export function appendAllSettled(s: InboxStatements, rows: readonly SettledDelivery[], at: string): void {
  rows.forEach((r) => appendSettled(s, r, at));
}

/** Up to `limit` of the account's pending rows, oldest first (SQLite has one writer: the transaction holds the lock). */
export function claimPending(s: InboxStatements, account: string, limit: number): InboxRow[] {
  let statement = s.pendingByLimit.get(limit);
  if (statement === undefined) {
    statement = s.db
      .prepare<[string], unknown[]>(`${INBOX_SELECT} WHERE account = ? AND state = 'pending' ORDER BY inbox_id LIMIT ${Math.trunc(limit)}`)
      .raw(true);
    s.pendingByLimit.set(limit, statement);
  }
  return statement.all(account).map(inboxRowOf);
}

/** This row, if it is still pending. */
export function claimPendingRow(s: InboxStatements, inboxId: number): InboxRow | undefined {
  const row = s.pendingById.get(inboxId);
  return row === undefined ? undefined : inboxRowOf(row);
}

/** Puts the account's unknown or dead envelopes back to pending; bodies that are not envelopes (and other accounts' rows) stay. */
export function requeue(s: InboxStatements, account: string, ids: readonly number[]): { requeued: number[]; skipped: number[] } {
  const requeued: number[] = [];
  const skipped: number[] = [];
  for (const id of ids) (s.requeue.run(id, account).changes === 1 ? requeued : skipped).push(id);
  return { requeued, skipped };
}
