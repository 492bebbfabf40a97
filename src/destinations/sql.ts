// The destinations' SQL (docs/destinations.md; migrations 019 on SQLite, 018 on PostgreSQL),
// written once for both engines in their own placeholders, beside the registry and the delivery
// that use it: the store runs it (`Store.featureSql`) and knows nothing of destinations. Nothing here
// runs in the projection's transaction: the delivery loop queues the changes after a destination's
// cursor, settles each queued change by its seq, and holds the destination under a lease so that
// one process at a time delivers it (its order per entity, its rate and its breaker are then one
// process's to keep). Times of the loop (`next_at`, `lease_until`) are ms since the epoch.
import type { EngineSql } from '../store/engine-sql.js';
import type { FeatureSql } from '../store/feature-sql.js';
import type { ChangesPort } from '../store/ports/changes.js';
import type { PeopleReads } from '../store/ports/people.js';
import type { ChangeEntity, StoredChange } from '../tables/changes.js';

export type DestinationState = 'active' | 'paused' | 'disabled';

/** What a destination receives: the account's changes, or its operator events (docs/destinations.md). */
type DestinationKind = 'changes' | 'operational';

/** What operators are told of a destination (docs/destinations.md, "Operator events"). */
type OperatorEventType = 'destination.paused' | 'destination.resumed' | 'destination.disabled' | 'delivery.dead';

/** An operator event as stored, numbered per account. */
export interface OperatorEvent {
  seq: number;
  type: OperatorEventType;
  /** The destination concerned. */
  destination: string;
  at: string;
  reason: string | null;
  /** delivery.dead: the seq of the change set aside. */
  change_seq: number | null;
}

/** A `destinations` row: `sealed` is ciphertext (the secrets and the whole URL), never a secret. */
export interface DestinationRecord {
  account: string;
  destination: string;
  /** The URL as shown (`maskedUrl`): without its user info and its query's values. */
  url: string;
  sealed: string;
  key_id: string;
  /** JSON of the filter. */
  filter: string;
  rate: number | null;
  /** JSON array of delays in ms, one per attempt. */
  schedule: string;
  state: DestinationState;
  state_reason: string | null;
  /** 1: paused until an operator enables it (never probed); 0 otherwise. */
  hold: number;
  kind: DestinationKind;
  /** JSON of its authentication as shown (DestinationAuth): never a secret; null when added before it was kept. */
  auth: string | null;
  cursor: number;
  failures: number;
  created_at: string;
  updated_at: string;
}

/** A change queued for a destination. */
export interface QueuedSend {
  seq: number;
  entity: ChangeEntity;
  entity_id: string;
  state: 'queued' | 'dead';
  attempts: number;
  next_at: number;
  last_status: number | null;
  last_error: string | null;
  failed_at: string | null;
}

/** How a failed attempt leaves its change and its destination. */
interface FailedAttempt {
  seq: number;
  /** Set aside ('dead') when the schedule is spent, else due again at `nextAt`. */
  dead: boolean;
  nextAt: number;
  status: number | null;
  error: string;
  at: string;
  /** The destination pauses (the breaker) when its consecutive failures reach this. */
  pauseAfter: number;
}

/** A send's outcome as a round settles it: delivered, or `failed` with how it leaves the change. */
export interface SendResult {
  seq: number;
  at: string;
  failed?: Omit<FailedAttempt, 'seq' | 'at'>;
}

/** The changes a round queues: those after the cursor `from` that passed the filter, up to `to`. */
export interface Enqueued {
  from: number;
  to: number;
  changes: ReadonlyArray<{ seq: number; entity: ChangeEntity | 'operator'; id: string }>;
  now: number;
}

/** A queued change that is due, with the change as it is stored now (null: dropped by retention). */
export interface DueSend extends QueuedSend {
  change: StoredChange | null;
}

/** A destination's queue in figures. */
export interface DestinationBacklog {
  queued: number;
  dead: number;
  /** The account's last seq (of its operator events, for an operational destination): `last - cursor` are not looked at yet. */
  last: number;
  /** When (ms) the oldest queued change is due, and the soonest due of those first for their entity; null when none is queued. */
  due: { oldest: number | null; soonest: number | null };
}

type Key = { account: string; destination: string };

/** The destinations of the database, across accounts (`destinationsOf(store)`). */
export interface DestinationsPort {
  /** The change stamp: bumped by every add, state change and removal. */
  version(): Promise<number>;
  /**
   * Inserts the destination, its cursor at `after` (it delivers what comes after), by default the
   * account's last change (or last operator event, for an operational one).
   */
  add(
    row: Omit<DestinationRecord, 'cursor' | 'failures' | 'state' | 'state_reason' | 'updated_at' | 'hold'> & { after?: number },
  ): Promise<DestinationRecord>;
  /** Every destination, or one account's, in creation order. */
  list(account?: string): Promise<DestinationRecord[]>;
  get(key: Key): Promise<DestinationRecord | undefined>;
  /**
   * Sets its state (failures back to 0, a hold lifted), telling the operator events of a pause or
   * a disable; `hold`: paused until an operator enables it. False when there is no such destination.
   */
  setState(key: Key, state: DestinationState, reason: string | null, at: string, hold?: boolean): Promise<boolean>;
  /**
   * Its cursor back to `to` (the account's head, below it after a restore), paused and held until
   * an operator enables it, telling the operator events.
   */
  rewind(key: Key, to: number, reason: string, at: string): Promise<void>;
  /** Replaces its sealed URL and secrets (a secret rotated, a certificate replaced) and its authentication as shown; false when there is no such destination. */
  setSealed(key: Key, sealed: string, keyId: string, at: string, auth: string): Promise<boolean>;
  /** Removes it and its queue; false when there is no such destination. */
  remove(key: Key): Promise<boolean>;
  /** Takes (or renews) the lease on the destination for `owner`; false when another holds a live one. */
  lease(key: Key, owner: string, now: number, leaseMs: number): Promise<boolean>;
  release(key: Key, owner: string): Promise<void>;
  /**
   * One round's writes, in one transaction that does not wait for the disk: the outcomes, in the
   * order they came (as `delivered` and `failed`), then the changes `enqueued` queued and the
   * cursor moved from `from` to `to`. False when the cursor had moved (nothing queued; the
   * outcomes settled all the same).
   */
  commit(key: Key, settlements: readonly SendResult[], enqueued?: Enqueued): Promise<boolean>;
  /**
   * Queued changes due at `now` that come first for their entity, oldest first, each with its
   * change as stored now (so an erasure since reaches it); paused: only the oldest queued change.
   * `busy`: seqs this process has sent and not settled yet, left out (their entities wait for them).
   */
  due(key: Key, now: number, limit: number, onlyOldest: boolean, busy?: readonly number[]): Promise<DueSend[]>;
  /** A delivered change leaves the queue; the destination's failures go back to 0 and a paused one is active again. */
  delivered(key: Key, seq: number, at: string): Promise<void>;
  /** A failed attempt: the change due again or set aside; the destination's failures counted, paused at `pauseAfter`. */
  failed(key: Key, attempt: FailedAttempt): Promise<void>;
  /** The queue, dead first or not (`state`), oldest first. */
  deliveries(key: Key, state: 'queued' | 'dead', limit: number): Promise<QueuedSend[]>;
  /** Puts dead changes (one by seq, or all) back in the queue, due at `now` with their attempts from 0; how many. */
  retryDead(key: Key, seq: number | undefined, now: number): Promise<number>;
  /**
   * A Redis destination's retry (its changes are never set aside): its first queued change (or the
   * queued change `seq`) due at `now`, its attempts from 0; how many (0 or 1).
   */
  retryFirst(key: Key, seq: number | undefined, now: number): Promise<number>;
  backlog(key: Key & { kind?: DestinationKind }): Promise<DestinationBacklog>;
  /**
   * Queues again, due at `now`, the changes (or operator events) given: a replay. One already
   * queued is made due now; one set aside (dead) is queued again with its attempts from 0. How many.
   */
  requeue(key: Key, items: ReadonlyArray<{ seq: number; entity: string; id: string }>, now: number): Promise<number>;
  /** The account's operator events after `after`, oldest first, and the last seq of its events (0: none yet). */
  events(account: string, after: number, limit: number): Promise<{ events: OperatorEvent[]; last: number }>;
}

/** What delivering reads of one account: its changes after a cursor, and a person's (a Redis stream deletes their entries at an erasure). */
export interface AccountChanges {
  changesAfter: ChangesPort['changesAfter'];
  readonly people: Pick<PeopleReads, 'changesOf'>;
}

/** The database as delivering uses it: the destinations' tables (this module), and each account's changes. */
export interface DeliveryStore {
  readonly destinations: DestinationsPort;
  forAccount(account: string): AccountChanges;
}

// A delivery's outcome is committed without waiting for the disk: lost to a power cut, the change
// is sent again with the same webhook-id (at least once, as promised), and the fsync a change
// cost held the one write connection that the intake needs (bench:destinations: delivery capped
// near 130 changes/s, intake slowed to 0.38).
const SETTLEMENT = { durable: false };

const COLUMNS =
  'account, destination, url, sealed, key_id, filter, rate, schedule, state, state_reason, hold, kind, auth, cursor, failures, created_at, updated_at';
const DELIVERY_COLUMNS = 'seq, entity, entity_id, state, attempts, next_at, last_status, last_error, failed_at';

function recordOf(row: DestinationRecord): DestinationRecord {
  return {
    ...row,
    cursor: Number(row.cursor),
    failures: Number(row.failures),
    hold: Number(row.hold),
    rate: row.rate === null ? null : Number(row.rate),
  };
}

function deliveryOf(row: QueuedSend): QueuedSend {
  return {
    ...row,
    seq: Number(row.seq),
    attempts: Number(row.attempts),
    next_at: Number(row.next_at),
    last_status: row.last_status === null ? null : Number(row.last_status),
  };
}

/** `$1, $2 …` or `?, ? …` from the n-th. */
function marks(sql: EngineSql, count: number, from = 1): string {
  return Array.from({ length: count }, (_, i) => sql.placeholder(from + i)).join(', ');
}

async function bump(sql: EngineSql): Promise<void> {
  await sql.rows('UPDATE destinations_version SET version = version + 1 WHERE only_row = 1 RETURNING version', []);
}

async function add(engine: FeatureSql, row: Parameters<DestinationsPort['add']>[0]): Promise<DestinationRecord> {
  return await engine.transaction(async (sql) => {
    await bump(sql);
    const heads = row.kind === 'operational' ? 'operator_event_heads' : 'change_heads';
    const [head] = await sql.rows<{ last_seq: number | string }>(`SELECT last_seq FROM ${heads} WHERE account = ${sql.placeholder(1)}`, [
      row.account,
    ]);
    const values = [row.account, row.destination, row.url, row.sealed, row.key_id, row.filter, row.rate, row.schedule, row.kind, row.auth];
    const [inserted] = await sql.rows<DestinationRecord>(
      `INSERT INTO destinations (account, destination, url, sealed, key_id, filter, rate, schedule, kind, auth, cursor, created_at, updated_at)
       VALUES (${marks(sql, 13)}) RETURNING ${COLUMNS}`,
      [...values, row.after ?? Number(head?.last_seq ?? 0), row.created_at, row.created_at],
    );
    return recordOf(inserted!);
  });
}

/** Numbers an operator event of the account and stores it, in the caller's transaction. */
async function recordEvent(sql: EngineSql, account: string, event: Omit<OperatorEvent, 'seq'>): Promise<void> {
  const $ = (n: number) => sql.placeholder(n);
  const [head] = await sql.rows<{ last_seq: number | string }>(
    `INSERT INTO operator_event_heads (account, last_seq) VALUES (${$(1)}, 1)
     ON CONFLICT (account) DO UPDATE SET last_seq = operator_event_heads.last_seq + 1 RETURNING last_seq`,
    [account],
  );
  await sql.rows(
    `INSERT INTO operator_events (account, seq, type, destination, at, reason, change_seq) VALUES (${marks(sql, 7)}) RETURNING seq`,
    [account, Number(head!.last_seq), event.type, event.destination, event.at, event.reason, event.change_seq],
  );
}

type StateRow = { state: DestinationState; state_reason: string | null; kind: DestinationKind };

/**
 * A destination's state and reason, read in the caller's transaction (to tell what a write changed).
 * An operational destination's own states are told nobody (undefined): an event about its failures
 * would be queued to it, and fail in turn.
 */
async function stateOf(sql: EngineSql, key: Key): Promise<StateRow | undefined> {
  const [row] = await sql.rows<StateRow>(
    `SELECT state, state_reason, kind FROM destinations WHERE account = ${sql.placeholder(1)} AND destination = ${sql.placeholder(2)}`,
    [key.account, key.destination],
  );
  return row?.kind === 'changes' ? row : undefined;
}

/** The operator event of a move from `before` to `after`, if it is one operators are told of. */
function transitionEvent(
  before: DestinationState | undefined,
  after: { state: DestinationState; state_reason: string | null } | undefined,
): Pick<OperatorEvent, 'type' | 'reason'> | undefined {
  if (before === undefined || after === undefined || before === after.state) return undefined;
  if (after.state === 'paused') return { type: 'destination.paused', reason: after.state_reason };
  if (after.state === 'disabled') return { type: 'destination.disabled', reason: after.state_reason };
  return before === 'paused' ? { type: 'destination.resumed', reason: after.state_reason } : undefined;
}

/** Sets a destination's state (and, for a rewind, its cursor) in the caller's transaction, telling the operator events. */
async function applyState(
  sql: EngineSql,
  key: Key,
  change: { state: DestinationState; reason: string | null; at: string; hold: boolean; cursor?: number },
): Promise<boolean> {
  const $ = (n: number) => sql.placeholder(n);
  await bump(sql);
  const before = await stateOf(sql, key);
  // Placeholders in the order they appear: SQLite binds `?` by position.
  const values: unknown[] = [change.state, change.reason, change.hold ? 1 : 0, change.at];
  const cursor = change.cursor === undefined ? '' : `, cursor = ${$(values.push(change.cursor))}`;
  const updated = await sql.rows(
    `UPDATE destinations SET state = ${$(1)}, state_reason = ${$(2)}, failures = 0, hold = ${$(3)}, updated_at = ${$(4)}${cursor}
     WHERE account = ${$(values.length + 1)} AND destination = ${$(values.length + 2)} RETURNING destination`,
    [...values, key.account, key.destination],
  );
  const event = transitionEvent(before?.state, { state: change.state, state_reason: change.reason });
  if (event !== undefined) await recordEvent(sql, key.account, { ...event, destination: key.destination, at: change.at, change_seq: null });
  return updated.length > 0;
}

async function setSealed(
  engine: FeatureSql,
  key: Key,
  sealed: { sealed: string; keyId: string; auth: string },
  at: string,
): Promise<boolean> {
  return await engine.transaction(async (sql) => {
    const $ = (n: number) => sql.placeholder(n);
    await bump(sql);
    const updated = await sql.rows(
      `UPDATE destinations SET sealed = ${$(1)}, key_id = ${$(2)}, updated_at = ${$(3)}, auth = ${$(4)}
       WHERE account = ${$(5)} AND destination = ${$(6)} RETURNING destination`,
      [sealed.sealed, sealed.keyId, at, sealed.auth, key.account, key.destination],
    );
    return updated.length > 0;
  });
}

async function remove(engine: FeatureSql, key: Key): Promise<boolean> {
  return await engine.transaction(async (sql) => {
    const $ = (n: number) => sql.placeholder(n);
    await bump(sql);
    await sql.rows(`DELETE FROM destination_deliveries WHERE account = ${$(1)} AND destination = ${$(2)} RETURNING seq`, [
      key.account,
      key.destination,
    ]);
    const removed = await sql.rows(`DELETE FROM destinations WHERE account = ${$(1)} AND destination = ${$(2)} RETURNING destination`, [
      key.account,
      key.destination,
    ]);
    return removed.length > 0;
  });
}

async function lease(sql: EngineSql, key: Key, owner: string, now: number, leaseMs: number): Promise<boolean> {
  const $ = (n: number) => sql.placeholder(n);
  const taken = await sql.rows(
    `UPDATE destinations SET lease_owner = ${$(1)}, lease_until = ${$(2)}
     WHERE account = ${$(3)} AND destination = ${$(4)} AND (lease_owner IS NULL OR lease_owner = ${$(5)} OR lease_until < ${$(6)})
     RETURNING destination`,
    [owner, now + leaseMs, key.account, key.destination, owner, now],
  );
  return taken.length > 0;
}

/** Queues the changes and moves the cursor, in the caller's transaction; false when the cursor had moved. */
async function enqueue(sql: EngineSql, key: Key, enqueued: Enqueued): Promise<boolean> {
  const $ = (n: number) => sql.placeholder(n);
  const moved = await sql.rows(
    `UPDATE destinations SET cursor = ${$(1)} WHERE account = ${$(2)} AND destination = ${$(3)} AND cursor = ${$(4)} RETURNING destination`,
    [enqueued.to, key.account, key.destination, enqueued.from],
  );
  if (moved.length === 0) return false;
  for (const change of enqueued.changes)
    await sql.rows(
      `INSERT INTO destination_deliveries (account, destination, seq, entity, entity_id, next_at) VALUES (${marks(sql, 6)})
       ON CONFLICT DO NOTHING RETURNING seq`,
      [key.account, key.destination, change.seq, change.entity, change.id, enqueued.now],
    );
  return true;
}

async function commit(engine: FeatureSql, key: Key, settlements: readonly SendResult[], enqueued?: Enqueued): Promise<boolean> {
  return await engine.transaction(async (sql) => {
    // The state before and after the outcomes: a pause (the breaker) or a resume is an operator event.
    const before = settlements.length === 0 ? undefined : await stateOf(sql, key);
    for (const settlement of settlements)
      if (settlement.failed === undefined) await settleDelivered(sql, key, settlement.seq, settlement.at);
      else {
        await settleFailed(sql, key, { ...settlement.failed, seq: settlement.seq, at: settlement.at });
        if (settlement.failed.dead && before !== undefined)
          await recordEvent(sql, key.account, {
            type: 'delivery.dead',
            destination: key.destination,
            at: settlement.at,
            reason: settlement.failed.error,
            change_seq: settlement.seq,
          });
      }
    const event = before === undefined ? undefined : transitionEvent(before.state, await stateOf(sql, key));
    if (event !== undefined)
      await recordEvent(sql, key.account, { ...event, destination: key.destination, at: settlements.at(-1)!.at, change_seq: null });
    return enqueued === undefined || (await enqueue(sql, key, enqueued));
  }, SETTLEMENT);
}

/** The delivery's columns, qualified, and its change's (`c_`), joined by `WITH_CHANGE`. */
const DUE_COLUMNS = `${DELIVERY_COLUMNS.split(', ')
  .map((c) => `d.${c}`)
  .join(', ')}, c.seq AS c_seq, c.op AS c_op, c.row AS c_row, c.at AS c_at, c.events AS c_events`;
const WITH_CHANGE = 'LEFT JOIN changes c ON c.account = d.account AND c.seq = d.seq';

type DueRow = QueuedSend & {
  c_seq: number | string | null;
  c_op: StoredChange['op'];
  c_row: string | null;
  c_at: string;
  c_events: string;
};

function dueOf({ c_seq, c_op, c_row, c_at, c_events, ...row }: DueRow): DueSend {
  const delivery = deliveryOf(row);
  const change =
    c_seq === null
      ? null
      : { seq: delivery.seq, entity: delivery.entity, id: delivery.entity_id, op: c_op, row: c_row, at: c_at, events: c_events };
  return { ...delivery, change };
}

async function due(
  sql: EngineSql,
  key: Key,
  query: { now: number; limit: number; onlyOldest: boolean; busy: readonly number[] },
): Promise<DueSend[]> {
  const $ = (n: number) => sql.placeholder(n);
  if (query.onlyOldest) {
    const oldest = await sql.rows<DueRow>(
      `SELECT ${DUE_COLUMNS} FROM destination_deliveries d ${WITH_CHANGE}
       WHERE d.account = ${$(1)} AND d.destination = ${$(2)} AND d.state = 'queued' ORDER BY d.seq LIMIT 1`,
      [key.account, key.destination],
    );
    return oldest.map(dueOf).filter((d) => d.next_at <= query.now && !query.busy.includes(d.seq));
  }
  // The busy seqs left out here, not after: their bodies are not read again at every round.
  // Placeholders in the order they appear (SQLite binds `?` by position): the busy seqs, then the limit.
  const notBusy = query.busy.length === 0 ? '' : ` AND d.seq NOT IN (${marks(sql, query.busy.length, 4)})`;
  const rows = await sql.rows<DueRow>(
    `SELECT ${DUE_COLUMNS} FROM destination_deliveries d ${WITH_CHANGE}
     WHERE d.account = ${$(1)} AND d.destination = ${$(2)} AND d.state = 'queued' AND d.next_at <= ${$(3)}
       AND NOT EXISTS (SELECT 1 FROM destination_deliveries e WHERE e.account = d.account AND e.destination = d.destination
                        AND e.entity = d.entity AND e.entity_id = d.entity_id AND e.state = 'queued' AND e.seq < d.seq)${notBusy}
     ORDER BY d.seq LIMIT ${$(4 + query.busy.length)}`,
    [key.account, key.destination, query.now, ...query.busy, query.limit],
  );
  return rows.map(dueOf);
}

async function settleDelivered(sql: EngineSql, key: Key, seq: number, at: string): Promise<void> {
  const $ = (n: number) => sql.placeholder(n);
  await sql.rows(`DELETE FROM destination_deliveries WHERE account = ${$(1)} AND destination = ${$(2)} AND seq = ${$(3)} RETURNING seq`, [
    key.account,
    key.destination,
    seq,
  ]);
  await sql.rows(
    `UPDATE destinations SET failures = 0,
       state = CASE WHEN state = 'paused' AND hold = 0 THEN 'active' ELSE state END,
       state_reason = CASE WHEN state = 'paused' AND hold = 0 THEN NULL ELSE state_reason END,
       updated_at = CASE WHEN state = 'paused' AND hold = 0 THEN ${$(1)} ELSE updated_at END
     WHERE account = ${$(2)} AND destination = ${$(3)} RETURNING destination`,
    [at, key.account, key.destination],
  );
}

async function settleFailed(sql: EngineSql, key: Key, attempt: FailedAttempt): Promise<void> {
  const $ = (n: number) => sql.placeholder(n);
  await sql.rows(
    `UPDATE destination_deliveries SET attempts = attempts + 1, state = ${$(1)}, next_at = ${$(2)}, last_status = ${$(3)},
       last_error = ${$(4)}, failed_at = ${$(5)}
     WHERE account = ${$(6)} AND destination = ${$(7)} AND seq = ${$(8)} RETURNING seq`,
    [
      attempt.dead ? 'dead' : 'queued',
      attempt.nextAt,
      attempt.status,
      attempt.error,
      attempt.at,
      key.account,
      key.destination,
      attempt.seq,
    ],
  );
  await sql.rows(
    `UPDATE destinations SET failures = failures + 1,
       state = CASE WHEN state = 'active' AND failures + 1 >= ${$(1)} THEN 'paused' ELSE state END,
       state_reason = CASE WHEN state = 'active' AND failures + 1 >= ${$(2)} THEN ${$(3)} ELSE state_reason END
     WHERE account = ${$(4)} AND destination = ${$(5)} RETURNING destination`,
    [attempt.pauseAfter, attempt.pauseAfter, `${attempt.pauseAfter} failures in a row`, key.account, key.destination],
  );
}

async function retryDead(engine: FeatureSql, key: Key, seq: number | undefined, now: number): Promise<number> {
  return await engine.transaction(async (sql) => {
    const $ = (n: number) => sql.placeholder(n);
    const one = seq === undefined ? '' : ` AND seq = ${$(4)}`;
    const retried = await sql.rows(
      `UPDATE destination_deliveries SET state = 'queued', attempts = 0, next_at = ${$(1)}
       WHERE account = ${$(2)} AND destination = ${$(3)} AND state = 'dead'${one} RETURNING seq`,
      [now, key.account, key.destination, ...(seq === undefined ? [] : [seq])],
    );
    return retried.length;
  });
}

async function retryFirst(engine: FeatureSql, key: Key, seq: number | undefined, now: number): Promise<number> {
  return await engine.transaction(async (sql) => {
    const $ = (n: number) => sql.placeholder(n);
    const which =
      seq === undefined
        ? `(SELECT MIN(seq) FROM destination_deliveries WHERE account = ${$(4)} AND destination = ${$(5)} AND state = 'queued')`
        : $(4);
    const retried = await sql.rows(
      `UPDATE destination_deliveries SET attempts = 0, next_at = ${$(1)}
       WHERE account = ${$(2)} AND destination = ${$(3)} AND state = 'queued' AND seq = ${which} RETURNING seq`,
      [now, key.account, key.destination, ...(seq === undefined ? [key.account, key.destination] : [seq])],
    );
    return retried.length;
  });
}

async function backlog(sql: EngineSql, key: Key & { kind?: DestinationKind }): Promise<DestinationBacklog> {
  const $ = (n: number) => sql.placeholder(n);
  const counts = await sql.rows<{ state: string; n: number | string }>(
    `SELECT state, count(*) AS n FROM destination_deliveries WHERE account = ${$(1)} AND destination = ${$(2)} GROUP BY state`,
    [key.account, key.destination],
  );
  const heads = key.kind === 'operational' ? 'operator_event_heads' : 'change_heads';
  const [head] = await sql.rows<{ last_seq: number | string }>(`SELECT last_seq FROM ${heads} WHERE account = ${$(1)}`, [key.account]);
  const [due] = await sql.rows<{ oldest: number | string | null; soonest: number | string | null }>(
    `SELECT (SELECT next_at FROM destination_deliveries WHERE account = ${$(1)} AND destination = ${$(2)} AND state = 'queued'
             ORDER BY seq LIMIT 1) AS oldest,
            (SELECT MIN(d.next_at) FROM destination_deliveries d
             WHERE d.account = ${$(3)} AND d.destination = ${$(4)} AND d.state = 'queued'
               AND NOT EXISTS (SELECT 1 FROM destination_deliveries e WHERE e.account = d.account AND e.destination = d.destination
                               AND e.entity = d.entity AND e.entity_id = d.entity_id AND e.state = 'queued' AND e.seq < d.seq)) AS soonest`,
    [key.account, key.destination, key.account, key.destination],
  );
  const of = (state: string) => Number(counts.find((c) => c.state === state)?.n ?? 0);
  const ms = (value: number | string | null | undefined) => (value === null || value === undefined ? null : Number(value));
  return {
    queued: of('queued'),
    dead: of('dead'),
    last: Number(head?.last_seq ?? 0),
    due: { oldest: ms(due?.oldest), soonest: ms(due?.soonest) },
  };
}

async function requeue(
  engine: FeatureSql,
  key: Key,
  items: ReadonlyArray<{ seq: number; entity: string; id: string }>,
  now: number,
): Promise<number> {
  return await engine.transaction(async (sql) => {
    let queued = 0;
    for (const item of items) {
      const rows = await sql.rows(
        `INSERT INTO destination_deliveries (account, destination, seq, entity, entity_id, next_at) VALUES (${marks(sql, 6)})
         ON CONFLICT (account, destination, seq) DO UPDATE SET state = 'queued', attempts = 0, next_at = ${sql.placeholder(7)}
         RETURNING seq`,
        [key.account, key.destination, item.seq, item.entity, item.id, now, now],
      );
      queued += rows.length;
    }
    return queued;
  });
}

async function events(sql: EngineSql, account: string, after: number, limit: number): Promise<{ events: OperatorEvent[]; last: number }> {
  const $ = (n: number) => sql.placeholder(n);
  const rows = await sql.rows<OperatorEvent>(
    `SELECT seq, type, destination, at, reason, change_seq FROM operator_events WHERE account = ${$(1)} AND seq > ${$(2)} ORDER BY seq LIMIT ${$(3)}`,
    [account, after, limit],
  );
  const [head] = await sql.rows<{ last_seq: number | string }>(`SELECT last_seq FROM operator_event_heads WHERE account = ${$(1)}`, [
    account,
  ]);
  return {
    events: rows.map((row) => ({ ...row, seq: Number(row.seq), change_seq: row.change_seq === null ? null : Number(row.change_seq) })),
    last: Number(head?.last_seq ?? 0),
  };
}

/** The destinations on an engine's statement runner. */
function destinationsPort(engine: FeatureSql): DestinationsPort {
  const sql = engine.pooled;
  const $ = (n: number) => sql.placeholder(n);
  const byKey = `account = ${$(1)} AND destination = ${$(2)}`;
  return {
    version: async () =>
      Number((await sql.rows<{ version: number | string }>('SELECT version FROM destinations_version', []))[0]?.version ?? 0),
    add: (row) => add(engine, row),
    list: async (account) =>
      (
        await sql.rows<DestinationRecord>(
          `SELECT ${COLUMNS} FROM destinations${account === undefined ? '' : ` WHERE account = ${$(1)}`} ORDER BY created_at, destination`,
          account === undefined ? [] : [account],
        )
      ).map(recordOf),
    get: async (key) => {
      const [row] = await sql.rows<DestinationRecord>(`SELECT ${COLUMNS} FROM destinations WHERE ${byKey}`, [key.account, key.destination]);
      return row === undefined ? undefined : recordOf(row);
    },
    setState: (key, state, reason, at, hold = false) => engine.transaction((tx) => applyState(tx, key, { state, reason, at, hold })),
    rewind: (key, to, reason, at) =>
      engine.transaction(async (tx) => void (await applyState(tx, key, { state: 'paused', reason, at, hold: true, cursor: to }))),
    setSealed: (key, sealed, keyId, at, auth) => setSealed(engine, key, { sealed, keyId, auth }, at),
    remove: (key) => remove(engine, key),
    lease: (key, owner, now, leaseMs) => engine.transaction((tx) => lease(tx, key, owner, now, leaseMs)),
    release: (key, owner) =>
      engine.transaction(
        async (tx) =>
          void (await tx.rows(
            `UPDATE destinations SET lease_owner = NULL, lease_until = NULL WHERE ${byKey} AND lease_owner = ${$(3)} RETURNING destination`,
            [key.account, key.destination, owner],
          )),
      ),
    commit: (key, settlements, enqueued) => commit(engine, key, settlements, enqueued),
    due: (key, now, limit, onlyOldest, busy = []) => due(sql, key, { now, limit, onlyOldest, busy }),
    delivered: (key, seq, at) => commit(engine, key, [{ seq, at }]).then(() => undefined),
    failed: (key, attempt) => commit(engine, key, [{ seq: attempt.seq, at: attempt.at, failed: attempt }]).then(() => undefined),
    deliveries: async (key, state, limit) =>
      (
        await sql.rows<QueuedSend>(
          `SELECT ${DELIVERY_COLUMNS} FROM destination_deliveries WHERE ${byKey} AND state = ${$(3)} ORDER BY seq LIMIT ${$(4)}`,
          [key.account, key.destination, state, limit],
        )
      ).map(deliveryOf),
    retryDead: (key, seq, now) => retryDead(engine, key, seq, now),
    retryFirst: (key, seq, now) => retryFirst(engine, key, seq, now),
    backlog: (key) => backlog(sql, key),
    events: (account, after, limit) => events(sql, account, after, limit),
    requeue: (key, items, now) => requeue(engine, key, items, now),
  };
}

const ports = new WeakMap<FeatureSql, DestinationsPort>();

/** The destinations of the store's database (every account's), made once per store. */
export function destinationsOf(store: { readonly featureSql: FeatureSql }): DestinationsPort {
  let port = ports.get(store.featureSql);
  if (port === undefined) ports.set(store.featureSql, (port = destinationsPort(store.featureSql)));
  return port;
}

/** A store as delivering uses it: the destinations' tables, and each account's changes. */
export function deliveryStoreOf(store: { readonly featureSql: FeatureSql; forAccount(account: string): AccountChanges }): DeliveryStore {
  return { destinations: destinationsOf(store), forAccount: (account) => store.forAccount(account) };
}
