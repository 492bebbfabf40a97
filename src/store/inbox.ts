import type { Issue } from '../events/index.js';
import type { Delivery, DeliveryVerdict } from '../receive/delivery.js';
import type { SqliteDatabase } from './database.js';

export type InboxState = 'pending' | 'projected' | 'unknown' | 'dead';

export type Appended = { inboxId: number; duplicate: false } | { inboxId: null; duplicate: true };

export interface InboxRow {
  inbox_id: number;
  received_at: string;
  raw: Buffer;
  identity: string | null;
  kind: string | null;
  verdict: DeliveryVerdict;
  secret_id: string | null;
  state: InboxState;
  reasons: string | null;
  attempts: number;
  processed_at: string | null;
}

/** The inbox's SQL, prepared once per connection. */
export function prepareInbox(db: SqliteDatabase) {
  const insert = db.prepare<[string, Uint8Array, string | null, string | null, DeliveryVerdict, string | null, InboxState, string | null], { inbox_id: number }>(
    `INSERT INTO inbox (received_at, raw, identity, kind, verdict, secret_id, state, reasons)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (identity) DO NOTHING
     RETURNING inbox_id`,
  );
  const pending = db.prepare<[number, number], InboxRow>(
    `SELECT * FROM inbox WHERE state = 'pending' AND inbox_id > ? ORDER BY inbox_id LIMIT ?`,
  );
  const byId = db.prepare<[number], InboxRow>('SELECT * FROM inbox WHERE inbox_id = ?');
  const setState = db.prepare<[InboxState, string | null, string, number]>(
    `UPDATE inbox SET state = ?, reasons = ?, processed_at = ?, attempts = attempts + 1 WHERE inbox_id = ?`,
  );
  const setAside = db.prepare<[number, number], InboxRow>(
    `SELECT * FROM inbox WHERE state IN ('unknown', 'dead') AND inbox_id > ? ORDER BY inbox_id LIMIT ?`,
  );
  const requeue = db.prepare<[number]>(
    `UPDATE inbox SET state = 'pending' WHERE inbox_id = ? AND state IN ('unknown', 'dead') AND verdict = 'accepted'`,
  );
  const counts = db.prepare<[], { state: InboxState; count: number }>(
    'SELECT state, COUNT(*) AS count FROM inbox GROUP BY state',
  );

  return {
    /** Inserts one delivery; a second delivery of the same identity is reported, not stored. */
    append(delivery: Delivery): Appended {
      const state: InboxState = delivery.verdict === 'accepted' ? 'pending' : 'dead';
      const row = insert.get(
        delivery.receivedAt,
        delivery.raw,
        delivery.identity,
        delivery.kind,
        delivery.verdict,
        delivery.secretId,
        state,
        delivery.reasons === null ? null : JSON.stringify(delivery.reasons),
      );
      return row === undefined ? { inboxId: null, duplicate: true } : { inboxId: row.inbox_id, duplicate: false };
    },
    pending: (afterId: number, limit: number): InboxRow[] => pending.all(afterId, limit),
    get: (inboxId: number): InboxRow | undefined => byId.get(inboxId),
    settle(inboxId: number, state: Exclude<InboxState, 'pending'>, reasons: Issue[] | null, at: string): void {
      setState.run(state, reasons === null ? null : JSON.stringify(reasons), at, inboxId);
    },
    setAside: (afterId: number, limit: number): InboxRow[] => setAside.all(afterId, limit),
    /** Puts an unknown or dead event back in the work list; false when it cannot be (not an envelope). */
    requeue: (inboxId: number): boolean => requeue.run(inboxId).changes === 1,
    counts(): Record<InboxState, number> {
      const result: Record<InboxState, number> = { pending: 0, projected: 0, unknown: 0, dead: 0 };
      for (const { state, count } of counts.all()) result[state] = count;
      return result;
    },
  };
}

export type Inbox = ReturnType<typeof prepareInbox>;
