// The shapes of what the store holds and hands back: inbox rows, projected rows as stored, what
// a batch settles, what an erasure asks and finds. Plain data; the ports that move them are in
// write-ports.ts and ports/.
import type { Issue } from '../events/index.js';
import type { Delivery, DeliveryVerdict } from '../receive/delivery.js';
import type { InboxState } from './inbox-state.js';
import type { StoredChange } from '../tables/changes.js';

export type Appended = { inboxId: number; duplicate: false } | { inboxId: null; duplicate: true };

/** One delivery as the inbox keeps it: its exact bytes, how they read, and how far it was processed. */
export interface InboxRow {
  /** The row's id, increasing in the order of arrival. */
  inbox_id: number;
  /** The account it was delivered to (docs/projection.md section 9). */
  account: string;
  /** UTC ISO 8601 with milliseconds. */
  received_at: string;
  /** The exact bytes received. */
  raw: Uint8Array;
  /** The event's identity (docs/projection.md section 1); null when the body is not an event. */
  identity: string | null;
  /** SHA-256 of `raw` for bodies that are not events (null for events, and for rows stored before it existed). */
  raw_sha256: string | null;
  /** The body's `event`, as sent (null when the body is not an envelope). */
  kind: string | null;
  /** How the body read when it was received. */
  verdict: DeliveryVerdict;
  /** The fingerprint of the secret that verified it; null when unsigned. */
  secret_id: string | null;
  /** How far it was processed. */
  state: InboxState;
  /** JSON array of {path, message}, for unknown and dead rows. */
  reasons: string | null;
  /** How many times its projection was tried. */
  attempts: number;
  /** When it was last processed: UTC ISO 8601; null while pending. */
  processed_at: string | null;
  /** Whether some of its handlers are still to run. */
  handlers_pending: boolean;
  /** The W3C traceparent of the request that brought it (tracing on), else null. */
  trace_context?: string | null;
}

/** A handler call that kept failing, set aside after its last attempt. */
export interface HandlerFailureRow {
  /** The failure's id (`retryHandlers` takes it). */
  failure_id: number;
  /** The inbox row of the event it handled. */
  inbox_id: number;
  /** The handler's name (`kind:function name`, or the `name` it was registered with). */
  handler: string;
  /** The last error's message. */
  error: string;
  /** How many calls were made. */
  attempts: number;
  /** When the last call failed: UTC ISO 8601. */
  failed_at: string;
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
  /**
   * An erasure copied from another database (a dump's erasure line, replayed; by `candidateId`):
   * nothing done (`found: false`) when this one (candidate, `erasedAt`) is recorded already, so
   * that a second replay of a dump changes nothing; recorded even when nothing here names the
   * person, so that their older events change nothing here either; owing the onErase hooks only
   * when it erased something here.
   */
  copied?: boolean;
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

/** An accepted inbox row read back by a bulk rebuild, with how it was last processed. */
export interface StoredEvent {
  inbox_id: number;
  raw: Uint8Array;
  identity: string | null;
  state: InboxState;
  reasons: string | null;
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

/** Whether the store can take deliveries now (`receiver.probe()`), and if not, why. */
export type ReadinessProbe = { ok: true } | { ok: false; reason: string };

/** Accounts that have work waiting, each once, in account order (the dispatcher takes them in turn). */
export interface AccountsWithWork {
  /** Accounts with rows pending projection. */
  projection: string[];
  /** Accounts with rows whose handlers are due (claimed or not). */
  handlers: string[];
}

/** A page of an account's changes after a cursor, with where its feed stands. */
export interface StoredChangePage {
  /** In `seq` order. */
  changes: StoredChange[];
  /** The highest `seq` ever given in the account (0: none yet). */
  last: number;
  /** The highest `seq` retention dropped (0: none): a cursor below it missed changes. */
  droppedThrough: number;
  /** The lowest `seq` still kept (null: none kept). */
  oldest: number | null;
}
