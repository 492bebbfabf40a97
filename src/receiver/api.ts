// What createReceiver returns: the public surface of a receiver, one documented member each.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as NetServer } from 'node:net';
import type { RequestHandler, Router } from 'express';
import type { Registry } from 'prom-client';
import type { DashboardOptions } from '../console/dashboard.js';
import type { FeedOptions } from './feed-router.js';
import type { DeadLetters } from '../dispatch/dead-letters.js';
import type { AnyHandler, Handler } from '../dispatch/handlers.js';
import type { EventKind } from '../events/index.js';
import type { Change, ChangePage, ChangePageParameters, FollowChangesOptions, Queries } from '../query/index.js';
import type { IncomingRequest, IntakeResult } from '../receive/intake.js';
import type { ConnectionScreen } from '../receive/connection-screen.js';
import type { Secret } from '../signature.js';
import type { Accounts } from '../accounts/index.js';
import type { ReconcileOptions, ReconcileReport } from '../reconcile/index.js';
import type { ReplayInput, ReplayOptions, ReplaySummary } from '../replay/index.js';
import type { CandidateMatch, ReadinessProbe } from '../store/rows.js';
import type { InboxState } from '../store/inbox-state.js';
import type { StoreHandle } from '../store/handle.js';
import type { CandidateExport, EraseHook, EraseOptions, ErasureReport, RetentionOptions, RetentionReport } from '../privacy/index.js';

/**
 * What a receiver does for one account (docs/accounts.md): the receiver itself for the default
 * account, `receiver.forAccount(id)` for another. Each reaches that account's rows only.
 */
export interface AccountReceiver {
  /** The account these members reach. */
  readonly account: string;
  /** Reads of the projected state: campaigns with stats, candidate lists, credits. */
  query: Queries;
  /** Unknown and invalid events, failed handlers: list and reprocess them. */
  deadLetters: DeadLetters;
  /**
   * Replays fixture events (objects, .json, .ndjson, folders) through the same path as HTTP.
   * Rejects with ReplayInputError, after replaying the rest, when an input cannot be read.
   * Batch by batch, so that a live receiver goes on answering; `bulk: true` loads an empty
   * database in one transaction (see `ReplayOptions.bulk`).
   */
  replay(inputs: Iterable<ReplayInput> | ReplayInput, replayOptions?: ReplayOptions): Promise<ReplaySummary>;
  /**
   * Compares the service's own state (campaigns, candidate lists, credits, read with `client`)
   * with the projection, and writes what differs as `reconcile.*` events stamped with the time
   * of the reading: webhooks older than the reading do not undo a repair, newer ones win.
   * Resumes an interrupted run; `dryRun` only reports.
   */
  reconcile(reconcileOptions: ReconcileOptions): Promise<ReconcileReport>;
  /**
   * Erases a person (GDPR article 17; docs/projection.md section 8), in one transaction: the
   * candidate `candidateId`, or every candidate whose projected `email` (any case) or `phone` (as
   * E.164, any spacing) matches, in every campaign. Their projected rows and interview responses
   * are deleted, every stored row naming them (by id, e-mail or phone, as values) redacted, each
   * erasure recorded in `erasures` with `reason`; then none of it is left on disk that the engine
   * can reach. Later events dated at or before the erasure, and reconciliation, never bring the
   * person back. `dryRun` says what it would do and changes nothing. Rejects with
   * `UnknownCandidateError` (nothing changed) or `ErasureRequestError` (no reason). Returns every
   * id erased and counts, never the erased values.
   */
  erase(match: CandidateMatch, options: EraseOptions): Promise<ErasureReport>;
  /**
   * Retention: erases, in one transaction and by the same rules, every candidate whose latest event
   * (by its timestamp) is older than `olderThan` (ms, or a cutoff date), and redacts the rows set
   * aside received before it. Reason `retention` unless given. Returns counts and ids only.
   */
  eraseInactive(options: RetentionOptions): Promise<RetentionReport>;
  /** Everything held about one candidate (GDPR article 15), as one JSON-ready document: the rows an erasure would redact, and its projected rows. */
  exportCandidate(candidateId: string): Promise<CandidateExport>;
  /**
   * The account's changes (docs/changes.md): every committed change to a campaign, candidate or
   * the credits, after the cursor `after` (absent: from the oldest kept), in `seq` order, each
   * once; then the changes committed later, by any process on the database, until the iterator is
   * returned (`break`), `signal` aborts or the receiver closes, or at the end with `follow: false`. Throws
   * ChangesDroppedError when retention dropped changes the cursor had not reached, and
   * CursorAheadError when the cursor is past the account's last change (a restored database).
   */
  changes(options?: FollowChangesOptions): AsyncGenerator<Change, void, undefined>;
  /**
   * One page of the account's changes after `after` (at most `limit`, 1 to 1000, default 100) and
   * the cursor to ask from next. Rejects with ChangesDroppedError, CursorAheadError, or QueryParameterError.
   */
  changesPage(parameters?: ChangePageParameters): Promise<ChangePage>;
  /** Inbox counts by state, and the handler failures. */
  counts(): Promise<Record<InboxState, number> & { handler_failures: number }>;
}

/** A receiver (`createReceiver`): HTTP adapters, handlers, the default account's reads and operations, and its lifecycle. */
export interface Receiver extends AccountReceiver {
  /**
   * The same members for another account (`/webhooks/<route key>`): its queries, dead letters,
   * replay, reconciliation, erasure, export and counts. Throws ConfigurationError for a string that
   * is not an account id, and UnknownAccountError for an id the registry does not hold (as of the
   * routes it keeps current, read every second; an account added through `accounts()` is known at
   * once); before the registry was first read, or with `accounts: false`, the members reject with
   * UnknownAccountError instead. A registered account with no rows yet reads as empty.
   */
  forAccount(account: string): AccountReceiver;
  /**
   * Resolves once the database is open and migrated (at once on SQLite) and the first heartbeat
   * was tried (commands on the database then see this receiver); rejects if it never can be.
   */
  ready(): Promise<void>;
  /**
   * The registry of the other accounts this receiver routes to (`openAccounts` on its store, with
   * its accounts key): add, disable, rotate, remove. Undefined with `accounts: false`.
   */
  accounts(): Promise<Accounts | undefined>;
  /** The storage engine behind the receiver (its location says where the data lives). */
  store(): Promise<StoreHandle>;
  /** The framework-free core: raw bytes and headers in, an answer out, the event stored. */
  receive(request: IncomingRequest): Promise<IntakeResult>;
  /**
   * Replaces the webhook secrets without a restart (a rotation: give the old and the new, then
   * the new alone once the old is no longer used). Requests already being verified finish with
   * the previous set. Throws ConfigurationError, keeping the current set, when the new one is
   * empty on a signed receiver.
   */
  setSecrets(secrets: readonly Secret[]): void;
  /**
   * Verified requests by the fingerprint of the secret that matched, since this process started
   * (the metric `prequal_hooks_verified_requests_total`): the old secret of a rotation is unused
   * once its count stops growing.
   */
  secretUse(account?: string): Promise<Array<{ fingerprint: string; requests: number }>>;
  /**
   * Express middleware: `app.post('/webhooks', receiver.middleware())`, and for the other accounts
   * `app.post('/webhooks/:routeKey', receiver.middleware())` (docs/accounts.md).
   */
  middleware(): RequestHandler;
  /**
   * A node:http listener: `http.createServer(receiver.nodeHandler())`. A path ending
   * `/webhooks/<route key>` goes to that account, any other to the default account, unless
   * `routeKeyOf` finds the key otherwise. A body's bytes are charged to the client address
   * `clientOf` gives (by default the peer's), for its share of the budget of bodies held
   * (docs/security.md, "Limits").
   */
  nodeHandler(routing?: {
    routeKeyOf?: (req: IncomingMessage) => string | undefined;
    clientOf?: (req: IncomingMessage) => string | undefined;
  }): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /**
   * Refuses, unread, the new connections of `server` from a client address over its budget of
   * failed requests while requests contend for the event loop: `429` with `Retry-After`, or closed
   * on TLS (docs/security.md, "Limits"). `serve` does it. Call it on a node:http(s) server of your
   * own whose peers are the senders themselves, not a reverse proxy (whose one address every
   * request shares). Without it, such requests are still refused 429 by the handler and the
   * middleware, but only after Node has parsed what their connection sent.
   */
  screenConnections(server: NetServer, screenOptions?: ConnectionScreen): void;
  /** A fetch handler: `(request: Request) => Promise<Response>`; routes as `nodeHandler` does, by the URL's path. */
  fetchHandler(routing?: { routeKeyOf?: (request: Request) => string | undefined }): (request: Request) => Promise<Response>;
  /**
   * Calls `handler` for each distinct event of the kind, after its projection committed, at
   * least once (again after a crash), one event at a time per candidate in arrival order, across
   * every process sharing the database. A throwing or rejecting handler is retried with
   * exponential backoff, then recorded as a dead letter.
   */
  on<K extends EventKind>(kind: K, handler: Handler<K>, handlerOptions?: { name?: string }): void;
  /** Like `on`, for every kind this version knows. */
  onAny(handler: AnyHandler, handlerOptions?: { name?: string }): void;
  /**
   * Called at least once for every erasure (this receiver's, another process's, the CLI's,
   * retention's, and erasures made before the hook was registered) with the candidate's id, so
   * that the application erases its own copies (a CRM, a mailing list). Each call is retried with
   * a doubling delay (`dispatch.handlerAttempts`, `handlerRetryDelayMs`, `handlerTimeoutMs`); a
   * round that still fails is tried again a minute later, then doubling up to an hour, until every
   * hook has succeeded (the `erasure_hooks` table holds what is owed). Make it idempotent.
   */
  onErase(hook: EraseHook, hookOptions?: { name?: string }): void;
  /**
   * This receiver's Prometheus registry (prom-client): requests by status and outcome, events by
   * kind and state, projection lag, handler calls, inbox rows, storage up, process defaults.
   * Serve it on your own route: `res.type(registry.contentType).send(await registry.metrics())`.
   */
  metrics(): Registry;
  /**
   * The operator console, an Express Router: `app.use('/ops', receiver.dashboard({ token }))`.
   * Never served without a token (16 characters at least); `readOnly` turns the actions off.
   */
  dashboard(dashboardOptions: DashboardOptions): Router;
  /**
   * The change feed (docs/changes.md), an Express Router answering `GET <mount>/changes?account=&after=&limit=`
   * exactly as `serve` answers `GET /changes`: pages, or server-sent events with
   * `Accept: text/event-stream`, opened by `token`, `dashboardToken` or an account's own feed token
   * (`accounts set-feed-token`, for that account only), with the same statuses and errors.
   * `app.use('/feed', receiver.feed({ token }))` serves `/feed/changes`. Its live streams end when
   * the receiver closes. Throws ConfigurationError for a token under 16 characters.
   */
  feed(feedOptions?: FeedOptions): Router;
  /** Resolves once every stored event is projected and its handlers have run, and a round of onErase hooks that runs has ended. */
  drain(): Promise<void>;
  /**
   * Whether processing has fallen far enough behind to refuse readiness: the handler window is
   * full, or as many handler calls as may run at once are stuck past `handlerTimeoutMs`.
   */
  saturated(): boolean;
  /**
   * Whether webhooks are waiting for their write now. Background work of your own can yield to
   * them for a moment, as the projection and `serve`'s destinations do, so that the sender's
   * answers come first.
   */
  intakeBusy(): boolean;
  /** Handler calls abandoned at their timeout that have not settled since (readiness says how many). */
  stuckHandlerCalls(): number;
  /** Whether the store can take a write now (readiness), without waiting on a lock. */
  probe(): Promise<ReadinessProbe>;
  /**
   * Stops accepting (new requests get 503), writes what is waiting, drains the dispatcher
   * (up to `timeoutMs`, default 5000), and closes the database if the receiver opened it.
   */
  close(timeoutMs?: number): Promise<void>;
}
