// The write ports: one per stage that writes, so that each consumer names the narrow part it
// needs (the group commit the intake, the projection loop the claims). `WriteTx` and `Store`
// (store.ts) are their sums, and the engines implement those.
import type { Delivery } from '../receive/delivery.js';
import type {
  Appended,
  ErasureHookRow,
  ErasureHookSettlement,
  ErasureOutcome,
  ErasureRequest,
  HandlerFailureRow,
  IdentityKey,
  InboxRow,
  ReceiverRow,
  SettledDelivery,
  Settlement,
  StoredEvent,
} from './rows.js';
import type { ChangeRecord } from '../tables/changes.js';
import type { StoredBody } from './bodies.js';
import type { RowKeys, RowWrites, StagedEffect, StoredRows } from '../tables/stored.js';

/** The intake's part of a write transaction: new deliveries in, duplicates found. */
interface IntakeTx {
  /**
   * Inserts deliveries; one whose identity (or, for a body that is not an event, raw-bytes hash)
   * is stored already, or earlier in the list, is a duplicate.
   */
  append(deliveries: readonly Delivery[]): Promise<Appended[]>;
  /** Which of these identities (each with its delivery's `eventAt`) are stored already. */
  known(identities: readonly IdentityKey[]): Promise<Set<string>>;
  /** Inserts deliveries already processed (replay). The caller checked `known` in this transaction. */
  appendSettled(rows: readonly SettledDelivery[], at: string): Promise<void>;
}

/** Claims of pending inbox rows and their settlement, in the transaction that projects them. */
export interface ClaimsTx {
  /**
   * Takes up to `limit` pending rows, oldest first, locked for this transaction: another process
   * skips them, and they are pending again if this one dies before committing.
   */
  claimPending(limit: number): Promise<InboxRow[]>;
  /**
   * Takes this row if it is still pending and no other process holds it, locked as `claimPending`
   * locks: to settle exactly the row a failed transaction had claimed.
   */
  claimPendingRow(inboxId: number): Promise<InboxRow | undefined>;
  /**
   * Records how claimed rows were processed. `keepHandlers` leaves their handler marks as they are
   * (a rebuild re-projects without running handlers again).
   */
  settle(settlements: readonly Settlement[], at: string, options?: { keepHandlers?: boolean }): Promise<void>;
  /**
   * Empties the projected tables and makes every event pending again (a rebuild), handler marks
   * untouched; returns how many events are pending now.
   */
  resetProjection(): Promise<number>;
  /**
   * A rebuild's end, after its last batch: records the changes its new state differs by from the
   * state `resetProjection` found (docs/projection.md section 10); how many.
   */
  finishRebuild(): Promise<number>;
}

/** The projected rows a batch reads, locked, and writes back (src/project/batch.ts). */
export interface ProjectionWritesTx {
  /** The account whose rows this transaction reaches. */
  readonly account: string;
  /** Locks and reads the rows of these keys; keys with no row yet come back as empty `absent` rows. */
  lockRows(keys: RowKeys): Promise<StoredRows>;
  saveRows(writes: RowWrites): Promise<void>;
  /**
   * Numbers these changes (docs/projection.md section 10) after the account's last and records them,
   * in this transaction. Nothing, not even a lock, when the list is empty. Call it last: on
   * PostgreSQL it holds the account's numbering until the commit.
   */
  recordChanges(changes: readonly ChangeRecord[]): Promise<void>;
  /** The latest erasure of each of these candidates that has one: candidate id to erased_at (ms). */
  erasures(candidateIds: readonly string[]): Promise<Map<string, number>>;
}

interface SettingsTx {
  /** Sets a setting (inserted or replaced), committed with the rest of the transaction. */
  putSetting(key: string, value: string): Promise<void>;
}

/** Erasure and retention, and the claims of the onErase hooks erasures owe. */
export interface ErasureTx {
  /**
   * Erases a person: each candidate the request finds has its projected row and interview
   * responses deleted and an `erasures` row added; every stored row naming them (src/store/erasure-rows.ts)
   * is redacted, body and reasons, and the failures of its handlers stripped of their messages.
   */
  eraseCandidate(request: ErasureRequest): Promise<ErasureOutcome>;
  /** Redacts the rows set aside (unknown kinds, dead letters) received before `before`, body and reasons (retention); how many changed. */
  redactSetAside(before: string): Promise<number>;
  /**
   * Takes up to `limit` erasures whose hooks are due at `now` and not claimed by another process,
   * oldest first, claimed until `claimUntil` (a process that dies gives them back then). Of every
   * account: each row names its own.
   */
  claimErasureHooks(now: string, claimUntil: string, limit: number): Promise<ErasureHookRow[]>;
  settleErasureHook(erasureId: number, settlement: ErasureHookSettlement): Promise<void>;
  /**
   * Deletes every row of this account in every table (inbox, handler failures, projected tables,
   * erasures and their hooks): the removal of an account with its data. Returns how many inbox
   * rows went. The caller scrubs after the commit.
   */
  deleteAccountRows(): Promise<{ inboxRows: number }>;
}

/** The work one write transaction can do. Nothing is visible to others before it commits. */
export interface WriteTx extends IntakeTx, ClaimsTx, ProjectionWritesTx, SettingsTx, ErasureTx {}

/**
 * A bulk load (an engine may offer it): one transaction that holds the write lock from start to
 * end, for a replay into an empty inbox or a rebuild. Rows are appended without the random-order
 * indexes, which are built once, by sorting, at the end; effects are staged, then read back
 * sorted by row, so that each projected row is folded in memory and written once, in key order.
 */
export interface BulkLoad {
  /**
   * Appends rows to the inbox in the order given; a row whose identity (or, for a body that is
   * not an event, raw-bytes hash) was stored before is a duplicate and is not appended. Returns,
   * for each row, whether it was appended.
   */
  append(rows: readonly BulkRow[], at: string): boolean[];
  /** Keeps effects aside until `sortedEffects`. */
  stage(effects: readonly StagedEffect[]): void;
  /** Every candidate erased so far: its id to the instant (ms) of its latest erasure (erased candidates stay erased). */
  erasures(): Map<string, number>;
  /** How many accepted rows the inbox holds (what a rebuild reads). */
  accepted(): number;
  /** A rebuild's reading of the inbox: accepted rows after `afterId`, by inbox id. */
  events(afterId: number, limit: number): StoredEvent[];
  /** Records a rebuild's new outcome of rows (the caller passes those whose outcome changed). */
  resettle(settlements: readonly Settlement[], at: string): void;
  /** The staged effects sorted by table then key, a chunk at a time (a key may span chunks). */
  sortedEffects(chunk: number): Iterable<StagedEffect[]>;
  /** Inserts folded rows into the (empty) projected tables. */
  saveRows(writes: RowWrites): void;
  /** The account loaded. */
  readonly account: string;
  /**
   * Records the changes of rows new to the tables (docs/projection.md section 10), in a load into
   * an empty database; a rebuild ignores them and records its difference from the state before
   * at its end.
   */
  recordChanges(changes: readonly ChangeRecord[]): void;
}

/**
 * A row of a bulk load: an event already processed, or a body that is not one (a dead letter);
 * `body`, when given, is its raw bytes' stored form, made ahead (body-deflater.ts), else the load
 * makes it.
 */
type BulkRow = ({ settled: SettledDelivery } | { refused: Delivery }) & { body?: StoredBody };

export type BulkMode =
  /** Into an empty inbox and empty projected tables, of every account (a replay into a new database); refused otherwise. */
  | 'empty'
  /** Re-projects this account's whole inbox into its emptied projected rows; other accounts' rows are untouched. */
  | 'rebuild';

export interface WriteOptions {
  /**
   * Whether the commit must reach the disk before it returns (default true). Projection batches
   * pass false where the engine allows it: a batch lost to a power cut is only pending again.
   */
  durable?: boolean;
}

export interface HandlerClaimOptions {
  /** Who claims (one id per process). */
  owner: string;
  limit: number;
  /** How long the claim holds without renewal (ms): a process that dies loses it after this. */
  leaseMs: number;
  /** Rows this process already runs: not returned again. */
  running: ReadonlySet<number>;
}

/** Runs write transactions that can do `Tx`'s work (a `Store` runs them with all of `WriteTx`). */
export interface Transactions<Tx extends object> {
  /** Runs `work` in one write transaction, committed when it resolves, rolled back when it throws. */
  write<T>(work: (tx: Tx) => Promise<T>, options?: WriteOptions): Promise<T>;
}

/** What the intake's group commit (src/store/group-commit.ts) writes with. */
export interface IntakePort {
  /** How many write transactions can usefully run at once (1 where the engine has one writer). */
  readonly writeConcurrency: number;
  /**
   * `WriteTx.append` in a durable transaction of its own (the intake's group commit): on
   * PostgreSQL one statement, so one round trip where BEGIN and COMMIT would make it three.
   */
  append(deliveries: readonly Delivery[]): Promise<Appended[]>;
}

/** Rows set aside and handler failures, listed and put back to work (src/dispatch/dead-letters.ts). */
export interface DeadLettersPort {
  /** Unknown and dead rows, by inbox id. */
  setAside(afterId: number, limit: number): Promise<InboxRow[]>;
  /** Puts unknown or dead envelopes back to pending; bodies that are not envelopes stay dead. */
  requeue(inboxIds: readonly number[]): Promise<{ requeued: number[]; skipped: number[] }>;
  handlerFailures(afterId: number, limit: number): Promise<HandlerFailureRow[]>;
  /** Forgets handler failures and marks their events for the handlers again. */
  retryHandlerFailures(failureIds: readonly number[]): Promise<{ retried: number[]; skipped: number[] }>;
}

/** The handler pump's leases on rows whose handlers are due (src/dispatch/handler-pump.ts). */
export interface HandlerClaimsPort {
  /**
   * Handler work: rows whose handlers are due and that come first for their handler key (no
   * earlier row of the key is still pending projection or has handlers due: so one key's handlers
   * run one at a time, in inbox order, across processes), not claimed by a live lease; claimed
   * for `owner` until the lease ends.
   */
  claimHandlers(options: HandlerClaimOptions): Promise<InboxRow[]>;
  /** Extends the leases `owner` holds on these rows. */
  renewHandlerClaims(owner: string, inboxIds: readonly number[], leaseMs: number): Promise<void>;
  /** Every handler of the row succeeded or was given up on. */
  handlersDone(inboxId: number): Promise<void>;
  /** Gives a claim back without running (shutting down): the row's handlers are due again at once. */
  releaseHandlers(owner: string, inboxIds: readonly number[]): Promise<void>;
  recordHandlerFailure(failure: Omit<HandlerFailureRow, 'failure_id'>): Promise<void>;
}

export interface SettingsPort {
  /** A setting's value, or undefined. */
  setting(key: string): Promise<{ value: string; updated_at: string } | undefined>;
  /** Stores the value unless the key has one; returns the stored value (ours, or one set first elsewhere). */
  settingOnce(key: string, value: string): Promise<{ value: string; updated_at: string; created: boolean }>;
}

/** The receivers' heartbeat rows (src/store/presence.ts). */
export interface PresencePort {
  /**
   * Records that this receiver is alive now (its row inserted, or its beat refreshed). Never waits
   * for another connection's lock: a beat that cannot be written now fails, and the next one retries.
   */
  beat(receiver: Omit<ReceiverRow, 'age_ms'>): Promise<void>;
  /** Every receiver row, the most recently seen first. */
  receivers(): Promise<ReceiverRow[]>;
  /** Removes receivers' rows: one closing, or ones whose beats stopped long ago. */
  forgetReceivers(receiverIds: readonly string[]): Promise<void>;
}

/** What an erasure does outside its transaction (which `ErasureTx` works in). */
export interface ErasurePort {
  /**
   * After an erasure commits: leaves no erased byte on disk that the engine can reach. SQLite
   * (whose connections overwrite deleted content: secure_delete) checkpoints its WAL and truncates
   * it; PostgreSQL vacuums the tables erasure touches. `complete` is false when a reader kept the
   * WAL from being emptied (retried at the next erasure, or with `prequal-hooks erase --scrub`).
   */
  scrub(): Promise<{ complete: boolean }>;
}

/** Wake-ups between processes that share the store. */
export interface WorkSignals {
  /**
   * Calls `listener` when another process stored or requeued work (PostgreSQL: LISTEN/NOTIFY).
   * Engines that have no other writers never call it. Returns the unsubscribe function.
   */
  onWork(listener: () => void): () => void;
  /** Tells other processes that work was stored (after a commit). */
  announceWork(): void;
  /**
   * Calls `listener` with the account after a transaction that recorded changes (docs/changes.md)
   * commits: one of this store's, and on PostgreSQL one of any process (LISTEN/NOTIFY; '' for
   * any account, when the listening connection was established again). The destinations'
   * delivery waits on it. Returns the unsubscribe function.
   */
  onChanges(listener: (account: string) => void): () => void;
}
