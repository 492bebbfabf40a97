// The one storage boundary. The intake, the dispatcher, replay, dead letters, queries, settings
// and the CLI speak only to a `Store`; each engine (store/sqlite/, store/postgres/) implements it.
// Every call is asynchronous, since an engine may be remote.
import type { Issue } from '../events/index.js';
import type { Delivery, DeliveryVerdict } from '../receive/delivery.js';
import type { AccountsRegistry } from './accounts-registry.js';
import type { PeopleReads } from './ports/people.js';
import type { ProjectedReads } from './ports/projected.js';
import type { InboxState } from './inbox-state.js';
import type { ReadModel } from './ports/read-model.js';
import type { CampaignRow, CandidateRow, CreditsRow, InterviewResponse } from './tables.js';

export type { InboxState } from './inbox-state.js';

export type Appended = { inboxId: number; duplicate: false } | { inboxId: null; duplicate: true };

export interface InboxRow {
  inbox_id: number;
  /** The account it was delivered to (docs/projection.md section 9). */
  account: string;
  /** UTC ISO 8601 with milliseconds. */
  received_at: string;
  raw: Uint8Array;
  identity: string | null;
  /** SHA-256 of `raw` for bodies that are not events (null for events, and for rows stored before it existed). */
  raw_sha256: string | null;
  kind: string | null;
  verdict: DeliveryVerdict;
  secret_id: string | null;
  state: InboxState;
  /** JSON array of {path, message}, for unknown and dead rows. */
  reasons: string | null;
  attempts: number;
  processed_at: string | null;
  handlers_pending: boolean;
  /** The W3C traceparent of the request that brought it (tracing on), else null. */
  trace_context?: string | null;
}

export interface HandlerFailureRow {
  failure_id: number;
  inbox_id: number;
  handler: string;
  error: string;
  attempts: number;
  failed_at: string;
}

/** A projected row as stored: its columns, and its encoded field versions (src/project/versions.ts). */
export interface StoredRow<T> {
  row: T;
  field_versions: string;
  /** Not in the table yet (an empty row): `saveRows` must write it even if nothing set a column. */
  absent?: boolean;
}

/** The projected rows a batch of events touches. */
export interface RowKeys {
  campaigns: readonly string[];
  candidates: readonly string[];
  credits: boolean;
}

/** The rows of `RowKeys`, locked until the transaction ends; a key with no row yet comes as an empty, `absent` row. */
export interface StoredRows {
  campaigns: Map<string, StoredRow<CampaignRow>>;
  candidates: Map<string, StoredRow<CandidateRow>>;
  credits: StoredRow<CreditsRow> | undefined;
}

/** Rows to write back whole; `responses` replaces the interview responses of each candidate named. */
export interface RowWrites {
  campaigns: readonly StoredRow<CampaignRow>[];
  candidates: readonly StoredRow<CandidateRow>[];
  credits: StoredRow<CreditsRow> | undefined;
  responses: ReadonlyMap<string, readonly InterviewResponse[]>;
}

/** How an inbox row was processed; `handlers`: its handlers are due (in order with its key's others). */
export interface Settlement {
  inboxId: number;
  state: Exclude<InboxState, 'pending'>;
  reasons: Issue[] | null;
  handlers: boolean;
  /** The body to keep instead of the one stored: an erased candidate's event is redacted when processed. */
  raw?: Uint8Array;
}

/** Who to erase (docs/projection.md section 8): by id, or by e-mail (any case) or phone as projected. */
export type CandidateMatch = { candidateId: string } | { email: string } | { phone: string };

export interface ErasureRequest {
  /** One person (every candidate whose e-mail or phone matches), or these candidates by id (retention). */
  match: CandidateMatch | { candidateIds: readonly string[] };
  /** When the erasure runs: UTC ISO 8601 with milliseconds. */
  erasedAt: string;
  reason: string;
}

/**
 * What an erasure did: never the erased values. `candidates` in id order, each with the rows that
 * name it; `eventsRedacted` counts each row once, however many of them it names.
 */
export type ErasureOutcome =
  | { found: false }
  | { found: true; candidates: Array<{ candidateId: string; eventsRedacted: number }>; eventsRedacted: number; inboxIds: number[] };

/** An erasure whose onErase hooks are owed a call (no personal data: the id only). */
export interface ErasureHookRow {
  erasureId: number;
  /** The account the erased candidate belonged to. */
  account: string;
  candidateId: string;
  /** UTC ISO 8601 with milliseconds. */
  erasedAt: string;
  reason: string;
  /** Rounds of attempts that failed before this one. */
  rounds: number;
}

/** How a round of an erasure's hooks ended: all done, failed (next round at `dueAt`), or given back unrun. */
export type ErasureHookSettlement = { state: 'done' } | { state: 'failed'; error: string; dueAt: string } | { state: 'released' };

/** An identity as the inbox files it (within one account): under the instant of its event (`Delivery.eventAt`). */
export interface IdentityKey {
  identity: string;
  eventAt: number | null;
}

/** A delivery replay writes already processed, in one insert. */
export interface SettledDelivery {
  delivery: Delivery & { identity: string; kind: string };
  state: Exclude<InboxState, 'pending'>;
  reasons: Issue[] | null;
  handlers: boolean;
}

// The operations come in ports, one per stage that uses them, so that each consumer names the
// narrow part it needs (the group commit the intake, the projection loop the claims): `WriteTx`
// and `Store` are their sums, and the engines implement those.

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
}

/** The projected rows a batch reads, locked, and writes back (src/project/batch.ts). */
export interface ProjectionWritesTx {
  /** Locks and reads the rows of these keys; keys with no row yet come back as empty `absent` rows. */
  lockRows(keys: RowKeys): Promise<StoredRows>;
  saveRows(writes: RowWrites): Promise<void>;
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
 * One effect of one event, kept aside by a bulk load until every event is read: `set` is the
 * JSON of the columns it sets ('' for none: it only names its row).
 */
export interface StagedEffect {
  table: 'campaigns' | 'candidates' | 'credits';
  key: string;
  /** The event's order key (docs/projection.md section 2). */
  version: string;
  set: string;
}

/** An accepted inbox row read back by a bulk rebuild, with how it was last processed. */
export interface StoredEvent {
  inbox_id: number;
  raw: Uint8Array;
  identity: string | null;
  state: InboxState;
  reasons: string | null;
}

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
  append(rows: ReadonlyArray<{ settled: SettledDelivery } | { refused: Delivery }>, at: string): boolean[];
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
}

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

/**
 * A receiver process that projects, as its heartbeat row says: refreshed every `every_ms` while it
 * runs, removed when it closes (src/store/presence.ts). Commands that write events consult it.
 */
export interface ReceiverRow {
  /** One per process, made at its start. */
  receiver_id: string;
  pid: number;
  host: string;
  /** UTC ISO 8601. */
  started_at: string;
  /** How often it beats (ms). */
  every_ms: number;
  /** Since its last beat (ms): by the database server's clock on PostgreSQL, this host's on SQLite (one host). */
  age_ms: number;
}

export type ReadinessProbe = { ok: true } | { ok: false; reason: string };

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

export interface InboxPort {
  inboxRow(inboxId: number): Promise<InboxRow | undefined>;
  counts(): Promise<Record<InboxState, number> & { handler_failures: number }>;
  /** Whether any row is pending (after a crash, or written by another process). */
  hasPending(): Promise<boolean>;
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
interface ErasurePort {
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
}

interface Lifecycle {
  /** Where the data lives, without credentials, for logs: `sqlite:./data/x.db`, `postgres://host:5432/db`. */
  readonly location: string;
  /** Makes every write committed so far durable, those committed with `durable: false` included. */
  flush(): Promise<void>;
  /** Whether a write can be taken now (readiness), without waiting on another's lock. */
  probe(): Promise<ReadinessProbe>;
  close(): Promise<void>;
}

/** Accounts that have work waiting, each once, in account order (the dispatcher takes them in turn). */
export interface AccountsWithWork {
  /** Accounts with rows pending projection. */
  projection: string[];
  /** Accounts with rows whose handlers are due (claimed or not). */
  handlers: string[];
}

/**
 * Scoping to accounts (docs/projection.md section 9). A store is a view of one account: every
 * read, key, claim, erasure and rebuild it does reaches that account's rows only, and the rows it
 * writes carry it. Exceptions, which span the database: `append` (and `appendSettled`) write each
 * delivery under its own `Delivery.account`; operations by inbox id (`inboxRow`, `settle`,
 * `claimPendingRow`, `handlersDone`, the handler leases) reach the row whatever its account, since
 * ids are unique across accounts; settings, presence, `scrub`, `flush`, `probe`, `close` and
 * `claimErasureHooks` are the database's.
 */
export interface AccountScope {
  /** The account this view reaches (`openStore` opens the default account's). */
  readonly account: string;
  /** The same store (connection, lifecycle) scoped to another account; cheap, cached. Close only the store `openStore` returned. */
  forAccount(account: string): Store;
  /** Which accounts have work waiting, across the database. */
  accountsWithWork(): Promise<AccountsWithWork>;
}

/**
 * The store `openStore` opens, which the receiver, `createQueries`, `rebuild`, `eraseCandidate` and
 * the other functions of the API take. Only the engines of this package implement it: its members
 * change with the pipeline, and a store of your own is not supported.
 */
export interface Store
  extends
    Transactions<WriteTx>,
    IntakePort,
    InboxPort,
    DeadLettersPort,
    HandlerClaimsPort,
    SettingsPort,
    PresencePort,
    ErasurePort,
    WorkSignals,
    Lifecycle,
    AccountScope {
  /** What is read about a person (export, retention) and the audit trail of erasures. */
  readonly people: PeopleReads;
  /** The projected rows by key. */
  readonly projected: ProjectedReads;
  /** The reads of the console, the CLI and the queries: campaigns, candidate lists, the inbox. */
  readonly readModel: ReadModel;
  /** The accounts registry (src/accounts/): the database's, whatever account this view reaches. */
  readonly registry: AccountsRegistry;

  /**
   * Runs `work` as one bulk load, committed (and made durable) when it resolves, rolled back when
   * it throws. Resolves undefined, having done nothing, when mode 'empty' finds rows. Engines
   * without it (PostgreSQL) take the batched path.
   */
  bulkLoad?<T>(mode: BulkMode, work: (bulk: BulkLoad) => Promise<T>): Promise<T | undefined>;
}

/** A fault of the store (unreachable, locked, full, read-only): the caller answers 503 and retries. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The engine's code (SQLITE_BUSY, ECONNREFUSED, 53100 …) for logs and the 503's details; never the data. */
export function describeStorageError(error: unknown): { code: string; message: string } {
  if (error instanceof StoreUnavailableError) return { code: error.code, message: error.message };
  const code = (error as { code?: unknown })?.code;
  return {
    code: typeof code === 'string' ? code : 'STORAGE_ERROR',
    message: error instanceof Error ? error.message : String(error),
  };
}
