// The changes of the projected rows (docs/projection.md section 10) on PostgreSQL. Numbers follow
// commits with several replicas writing: a transaction takes its numbers by updating its account's
// row of change_heads, as its last statement that waits for a lock, and holds that row's lock until
// it commits; the next numbering of the account waits for that commit. So when a reader sees N,
// every change below N has committed. The wait is per account and lasts from numbering to commit,
// which is the end of the transaction: projection batches of one account commit one after another
// on every replica, and other accounts' go on.
import type { StoredChangePage } from '../rows.js';
import { CANDIDATE_CAMPAIGN_INDEX, storedChangeRow, type ChangeRecord, type StoredChange } from '../../tables/changes.js';
import { postgresSql } from './reads.js';
import { query, type Session } from './session.js';
import { CHANGES_CHANNEL } from './work-channel.js';
import { pruneChanges as pruneChangesOf } from '../prune-changes.js';
import { changeSizesSql, pageEnd } from '../change-page-end.js';
import { copyForRebuild, finishRebuildChanges, markRebuilding, type EngineWrites } from '../rebuild-changes.js';

/**
 * Numbers the changes after the account's last and inserts them; nothing, no lock either, when
 * there are none. The account is notified at the commit (work-channel.ts): a running delivery,
 * in this process or another, takes them up at once.
 */
export async function recordChanges(tx: Session, account: string, changes: readonly ChangeRecord[]): Promise<void> {
  if (changes.length === 0) return;
  const [head] = await query<{ last_seq: string }>(
    tx,
    `INSERT INTO change_heads (account, last_seq) VALUES ($1, $2)
     ON CONFLICT (account) DO UPDATE SET last_seq = change_heads.last_seq + excluded.last_seq
     RETURNING last_seq, pg_notify('${CHANGES_CHANNEL}', $1)`,
    [account, changes.length],
  );
  const first = Number(head!.last_seq) - changes.length + 1;
  // The time is read once numbered: after the previous numbering of the account committed, so
  // that `at` grows with `seq` (retention drops a prefix).
  const at = new Date().toISOString();
  await query(
    tx,
    `INSERT INTO changes (account, seq, entity, id, op, row, at, events)
     SELECT $1, $2::bigint + ordinality - 1, entity, id, op, row, $3, events
     FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY AS v(entity, id, op, row, events, ordinality)`,
    [
      account,
      first,
      at,
      changes.map((c) => c.entity),
      changes.map((c) => c.id),
      changes.map((c) => c.op),
      changes.map((c) => (c.row === null ? null : storedChangeRow(c.entity, c.row))),
      changes.map((c) => JSON.stringify(c.events)),
    ],
  );
}

/**
 * An erasure's part (docs/projection.md section 8): each earlier change of these candidates keeps
 * only its keys, and one `erase` change each is recorded (numbered last, as every numbering).
 */
export async function eraseChanges(tx: Session, account: string, candidateIds: readonly string[]): Promise<void> {
  if (candidateIds.length === 0) return;
  await query(
    tx,
    `UPDATE changes SET row = json_build_object('candidate_id', id, 'campaign_id',
       CASE WHEN left(row, 1) = '[' THEN row::json ->> ${CANDIDATE_CAMPAIGN_INDEX} ELSE row::json ->> 'campaign_id' END)::text
     WHERE account = $1 AND entity = 'candidate' AND id = ANY($2::text[]) AND row IS NOT NULL`,
    [account, candidateIds],
  );
  await recordChanges(
    tx,
    account,
    candidateIds.map((id) => ({ entity: 'candidate', id, op: 'erase', row: null, events: [] })),
  );
}

/** Up to `limit` of the account's changes after `after` (and about `maxBytes`), in order, and where its feed stands. */
export async function changesAfter(
  session: Session,
  account: string,
  after: number,
  limit: number,
  maxBytes?: number,
): Promise<StoredChangePage> {
  // The page ends where its sizes said, so that a change committed between the two reads is not in it.
  const through =
    maxBytes === undefined
      ? Number.MAX_SAFE_INTEGER
      : pageEnd(
          await query<{ seq: string; bytes: string }>(session, changeSizesSql(postgresSql(session)), [account, after, limit]),
          maxBytes,
        );
  const changes =
    through === undefined
      ? []
      : await query<StoredChange & { seq: string }>(
          session,
          'SELECT seq, entity, id, op, row, at, events FROM changes WHERE account = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4',
          [account, after, through, limit],
        );
  const [head] = await query<{ last_seq: string; dropped_through: string; oldest: string | null }>(
    session,
    `SELECT h.last_seq, h.dropped_through, (SELECT MIN(seq) FROM changes WHERE account = $1) AS oldest
     FROM change_heads h WHERE h.account = $1`,
    [account],
  );
  return {
    changes: changes.map((c) => ({ ...c, seq: Number(c.seq) })),
    last: Number(head?.last_seq ?? 0),
    droppedThrough: Number(head?.dropped_through ?? 0),
    oldest: head?.oldest == null ? null : Number(head.oldest),
  };
}

/** Retention's part (src/store/prune-changes.ts): up to `limit` changes recorded before `before` dropped; how many. */
export function pruneChanges(tx: Session, before: string, limit: number): Promise<number> {
  return pruneChangesOf(postgresWrites(tx), before, limit);
}

/** The transaction as the SQL written once for both engines takes it. */
function postgresWrites(tx: Session): EngineWrites {
  return { ...postgresSql(tx), run: async (sql, parameters) => void (await query(tx, sql, [...parameters])) };
}

/** A rebuild's start (src/store/rebuild-changes.ts) around `empty`, which empties the projected rows; returns what `empty` did. */
export async function startRebuild<T>(tx: Session, account: string, empty: () => Promise<T>): Promise<T> {
  const sql = postgresWrites(tx);
  const from = await copyForRebuild(sql, account);
  const result = await empty();
  await markRebuilding(sql, account, from);
  return result;
}

/** A rebuild's end: the changes its new state makes, recorded; how many. */
export function finishRebuild(tx: Session, account: string): Promise<number> {
  return finishRebuildChanges(postgresWrites(tx), account, (records) => recordChanges(tx, account, records));
}
