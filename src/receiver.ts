import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { RequestHandler, Router } from 'express';
import type { EventKind } from './events/index.js';
import { prepareDeadLetters, type DeadLetters } from './dispatch/dead-letters.js';
import { createDispatcher, type Dispatcher, type DispatcherOptions } from './dispatch/dispatcher.js';
import { createHandlerRegistry, type AnyHandler, type Handler } from './dispatch/handlers.js';
import { createLogger, type Logger } from './logging.js';
import { createQueries, type Queries } from './query/index.js';
import { replayInto, requireReadable, type ReplayInput, type ReplayOptions, type ReplaySummary } from './replay/index.js';
import { reconcileInto, type ReconcileOptions, type ReconcileReport } from './reconcile/index.js';
import type { Secret } from './signature.js';
import { expressMiddleware } from './receive/express.js';
import { fetchHandler } from './receive/fetch.js';
import { ConfigurationError, createIntake, type IncomingRequest, type IntakeResult } from './receive/intake.js';
import { nodeHandler, type ResultListener } from './receive/node-http.js';
import type { StoreOutcome } from './receive/delivery.js';
import type { Registry } from 'prom-client';
import { createMetrics } from './console/metrics.js';
import { createDashboard, type DashboardOptions } from './console/dashboard.js';
import { createGroupCommit, describeStorageError, type GroupCommit } from './store/group-commit.js';
import { isStore, openAtOnce, openStore, type DatabaseOption } from './store/open.js';
import { HEARTBEAT_MS, keepPresence, type Presence } from './store/presence.js';
import { StoreUnavailableError, type InboxState, type ReadinessProbe, type Store } from './store/store.js';

export interface ReceiverOptions {
  /**
   * Where the state lives: a SQLite file path (created with its folder), `:memory:`, an open
   * better-sqlite3 database, a `postgres://…` URL, or an existing `pg.Pool`.
   */
  database: DatabaseOption;
  /** PostgreSQL given as a URL: connections in the pool. Default 10. */
  poolSize?: number;
  /** PostgreSQL given as a URL: the schema of the tables. Default `public`. */
  schema?: string;
  /**
   * SQLite given as a file path: run its connection in a worker thread, so that statements,
   * commits and fsyncs leave the event loop. Default false: on a 2-core machine it measured no
   * faster (see README, Performance); it can help where other routes share the process and cores are free.
   */
  sqliteThread?: boolean;
  /** The shared secret from the agency dashboard. */
  secret?: Secret;
  /** Several secrets during a rotation; any one of them may sign. */
  secrets?: readonly Secret[];
  /** Accept unsigned events. Refused unless set explicitly, and only when no secret is given. */
  allowUnsigned?: boolean;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Default `X-Service-Signature`: put the service's real name in place of "Service". */
  signatureHeader?: string;
  /** Default `X-Service-Event`. */
  eventHeader?: string;
  /**
   * How long a write waits before answering 503 (ms): on SQLite for another connection's lock,
   * on PostgreSQL for a connection or a statement. Default 2000 (SQLite), 4000 (PostgreSQL).
   */
  busyTimeoutMs?: number;
  /** A pino logger; default: JSON lines at level `warn` on stdout, with PII redacted. */
  logger?: Logger;
  /** Called after each request is answered (for access logs and metrics). */
  onRequest?: ResultListener;
  /** Batch size, handler concurrency, attempts, retry delay and leases of the dispatcher. */
  dispatch?: DispatcherOptions;
  /**
   * A heartbeat row in the database, refreshed every `everyMs` (default 5000) while this receiver
   * runs and removed when it closes: it tells `prequal-hooks replay` and `dead-letters reprocess`
   * on the same database to leave their events to this receiver, which projects them and runs its
   * handlers. `false`: none (a short-lived script that only drains, and should not be handed work).
   */
  heartbeat?: false | { everyMs?: number };
}

/** How long readiness stays false after a webhook could not be stored (ms). */
const WRITE_FAILURE_HOLD_MS = 5000;

interface Running {
  store: Store;
  groupCommit: GroupCommit;
  dispatcher: Dispatcher;
  deadLetters: DeadLetters;
  queries: Queries;
  presence: Presence | undefined;
}

/**
 * Everything an agency backend needs: the intake (middleware, node:http and fetch handlers),
 * the durable inbox behind it, the dispatcher, the projected state and its queries, on SQLite
 * or PostgreSQL. SQLite opens at once (and throws here if it cannot); PostgreSQL opens in the
 * background, retried until it answers: until then webhooks get 503 and `ready()` waits.
 */
export function createReceiver(options: ReceiverOptions) {
  const logger = options.logger ?? createLogger({ level: 'warn' });
  const secrets = [...(options.secrets ?? []), ...(options.secret === undefined ? [] : [options.secret])];
  const handlers = createHandlerRegistry();
  // Replay and reconciliation mark handlers due only for kinds that have some.
  const wantsHandlers = (kind: EventKind) => handlers.for(kind).length > 0;
  const storeOptions = {
    ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs, timeoutMs: options.busyTimeoutMs }),
    ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
    ...(options.schema !== undefined && { schema: options.schema }),
    thread: options.sqliteThread ?? false,
    logger,
  };
  let closed = false;
  let openingFailure: Error | undefined;
  const metrics = createMetrics(() => running?.store);
  // Every answer is counted, then told to the caller's listener (access logs).
  const onRequest: ResultListener = (result, req, startedAt) => {
    metrics.request(result.answer.status, result.outcome);
    options.onRequest?.(result, req, startedAt);
  };
  // The last webhook write that failed, until one succeeds: readiness stays false for a while
  // after it, even when a small probe write gets through (a full disk can take a probe, not an event).
  let writeFailure: { code: string; at: number } | undefined;

  const heartbeat = options.heartbeat === false ? undefined : { everyMs: options.heartbeat?.everyMs ?? HEARTBEAT_MS };
  if (heartbeat !== undefined && !(Number.isInteger(heartbeat.everyMs) && heartbeat.everyMs >= 100)) {
    throw new ConfigurationError(`heartbeat.everyMs must be a whole number of milliseconds from 100, got ${String(heartbeat.everyMs)}`);
  }

  function assemble(store: Store): Running {
    let groupCommit: GroupCommit | undefined;
    const observer = {
      processed: (row: { kind: string | null; received_at: string }, state: string, at: number) => metrics.event(row.kind, state, row.received_at, at),
      handlerCall: (handler: string, result: 'ok' | 'failed' | 'timeout') => metrics.handlerCall(handler, result),
    };
    const dispatcher = createDispatcher({ store, handlers, logger, observer, intakeBusy: () => (groupCommit?.waiting() ?? 0) > 0 }, options.dispatch);
    // The next turn: the answers of a commit go out before any projection starts.
    groupCommit = createGroupCommit(store, {
      onCommitted: () => setImmediate(() => dispatcher.notify()),
      onOutcome: (failure) => {
        writeFailure = failure === undefined ? undefined : { code: failure, at: performance.now() };
      },
    });
    // Crash recovery: whatever a previous run stored but did not process is taken up now.
    dispatcher.start();
    const presence = heartbeat && keepPresence(store, { ...heartbeat, logger });
    return { store, groupCommit, dispatcher, deadLetters: prepareDeadLetters(store, () => dispatcher.start()), queries: createQueries(store), presence };
  }

  // A store that opens at once (SQLite) is opened now, so that a bad path or a newer schema
  // throws from createReceiver. A store given open (the CLI's) stays the caller's to close.
  const ownsStore = !isStore(options.database);
  const openNow = openAtOnce(options.database, storeOptions);
  let running: Running | undefined = openNow === undefined ? undefined : assemble(openNow);
  const opened: Promise<Running> =
    running !== undefined
      ? Promise.resolve(running)
      : (async () => {
          for (let wait = 250; ; wait = Math.min(wait * 2, 5000)) {
            if (closed) throw new StoreUnavailableError('CLOSED', 'the receiver was closed before its database opened');
            let store: Store;
            try {
              store = await openStore(options.database, storeOptions);
            } catch (error) {
              if (!(error instanceof StoreUnavailableError)) {
                openingFailure = error as Error;
                logger.error({ err: { message: (error as Error).message } }, 'cannot open the database');
                throw error;
              }
              logger.warn({ code: error.code, retryInMs: wait }, 'database unavailable; retrying');
              await delay(wait);
              continue;
            }
            // Closed while it was opening: nothing may start on it (a dispatcher, a heartbeat).
            if (closed) {
              if (ownsStore) await store.close();
              throw new StoreUnavailableError('CLOSED', 'the receiver was closed before its database opened');
            }
            running = assemble(store);
            return running;
          }
        })();
  opened.catch(() => undefined); // surfaced by ready(), 503s and the log, never as an unhandled rejection

  const use = async (): Promise<Running> => running ?? (await opened);

  async function store(delivery: Parameters<GroupCommit['append']>[0]): Promise<StoreOutcome> {
    if (running === undefined) {
      if (openingFailure !== undefined) return { ok: false, code: 'DATABASE_ERROR', message: openingFailure.message };
      return { ok: false, code: 'STARTING', message: 'the database is not open yet' };
    }
    return running.groupCommit.append(delivery);
  }

  let intake;
  try {
    intake = createIntake({
      secrets,
      allowUnsigned: options.allowUnsigned ?? false,
      ...(options.maxBodyBytes !== undefined && { maxBodyBytes: options.maxBodyBytes }),
      ...(options.signatureHeader !== undefined && { signatureHeader: options.signatureHeader }),
      ...(options.eventHeader !== undefined && { eventHeader: options.eventHeader }),
      store,
      logger,
    });
  } catch (error) {
    closed = true;
    void running?.presence?.stop().finally(() => (ownsStore ? running?.store.close() : undefined));
    throw error;
  }

  /** The queries, waiting for the database when it is still opening. */
  const query: Queries = {
    getCampaign: async (...args) => (await use()).queries.getCampaign(...args),
    listCampaigns: async () => (await use()).queries.listCampaigns(),
    listCandidates: async (...args) => (await use()).queries.listCandidates(...args),
    getCandidate: async (...args) => (await use()).queries.getCandidate(...args),
    getCredits: async () => (await use()).queries.getCredits(),
  };

  const receiver = {
    /**
     * Resolves once the database is open and migrated (at once on SQLite) and the first heartbeat
     * was tried (commands on the database then see this receiver); rejects if it never can be.
     */
    ready: async (): Promise<void> => void (await (await use()).presence?.firstBeat),
    /** The storage engine behind the receiver (its location says where the data lives). */
    store: (): Promise<Store> => use().then((r) => r.store),
    /** The framework-free core: raw bytes and headers in, an answer out, the event stored. */
    receive: (request: IncomingRequest): Promise<IntakeResult> => intake.receive(request),
    /** Express middleware: `app.post('/webhooks', receiver.middleware())`. */
    middleware: (): RequestHandler => expressMiddleware(intake, onRequest),
    /** A node:http listener: `http.createServer(receiver.nodeHandler())`. */
    nodeHandler: (): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) => nodeHandler(intake, onRequest),
    /** A fetch handler: `(request: Request) => Promise<Response>`. */
    fetchHandler: () => fetchHandler(intake),
    /**
     * Calls `handler` for each distinct event of the kind, after its projection committed, at
     * least once (again after a crash), one event at a time per candidate in arrival order, across
     * every process sharing the database. A throwing or rejecting handler is retried with
     * exponential backoff, then recorded as a dead letter.
     */
    on<K extends EventKind>(kind: K, handler: Handler<K>, handlerOptions?: { name?: string }): void {
      handlers.on(kind, handler, handlerOptions);
      running?.dispatcher.start();
    },
    /** Like `on`, for every kind this version knows. */
    onAny(handler: AnyHandler, handlerOptions?: { name?: string }): void {
      handlers.onAny(handler, handlerOptions);
      running?.dispatcher.start();
    },
    /** Reads of the projected state: campaigns with stats, candidate lists, credits. */
    query,
    /**
     * This receiver's Prometheus registry (prom-client): requests by status and outcome, events by
     * kind and state, projection lag, handler calls, inbox rows, storage up, process defaults.
     * Serve it on your own route: `res.type(registry.contentType).send(await registry.metrics())`.
     */
    metrics: (): Registry => metrics.registry,
    /**
     * The operator console, an Express Router: `app.use('/ops', receiver.dashboard({ token }))`.
     * Never served without a token (16 characters at least); `readOnly` turns the actions off.
     */
    dashboard: (dashboardOptions: DashboardOptions): Router => createDashboard(receiver, { logger, ...dashboardOptions }),
    /** Unknown and invalid events, failed handlers: list and reprocess them. */
    deadLetters: {
      list: async (limit?: number) => (await use()).deadLetters.list(limit),
      reprocess: async (ids: readonly number[] | 'all') => (await use()).deadLetters.reprocess(ids),
      retryHandlers: async (ids: readonly number[] | 'all') => (await use()).deadLetters.retryHandlers(ids),
    } satisfies DeadLetters,
    /**
     * Replays fixture events (objects, .json, .ndjson, folders) through the same path as HTTP.
     * Rejects with ReplayInputError, after replaying the rest, when an input cannot be read.
     * Batch by batch, so that a live receiver goes on answering; `bulk: true` loads an empty
     * database in one transaction (see `ReplayOptions.bulk`).
     */
    async replay(inputs: Iterable<ReplayInput> | ReplayInput, replayOptions?: ReplayOptions): Promise<ReplaySummary> {
      const r = await use();
      const summary = await replayInto({ store: r.store, wantsHandlers }, inputs, { bulk: false, ...replayOptions });
      r.dispatcher.start();
      return requireReadable(summary);
    },
    /**
     * Compares the service's own state (campaigns, candidate lists, credits, read with `client`)
     * with the projection, and writes what differs as `reconcile.*` events stamped with the time
     * of the reading: webhooks older than the reading do not undo a repair, newer ones win.
     * Resumes an interrupted run; `dryRun` only reports.
     */
    async reconcile(reconcileOptions: ReconcileOptions): Promise<ReconcileReport> {
      const r = await use();
      const report = await reconcileInto({ store: r.store, wantsHandlers }, reconcileOptions);
      if (report.written > 0) r.dispatcher.start();
      return report;
    },
    /** Resolves once every stored event is projected and its handlers have run. */
    drain: async (): Promise<void> => (await use()).dispatcher.drain(),
    /**
     * Whether processing has fallen far enough behind to refuse readiness: the handler window is
     * full, or as many handler calls as may run at once are stuck past `handlerTimeoutMs`.
     */
    saturated: (): boolean => running?.dispatcher.saturated() ?? false,
    /** Handler calls abandoned at their timeout that have not settled since (readiness says how many). */
    stuckHandlerCalls: (): number => running?.dispatcher.stuckHandlerCalls() ?? 0,
    /** Whether the store can take a write now (readiness), without waiting on a lock. */
    async probe(): Promise<ReadinessProbe> {
      if (closed) return { ok: false, reason: 'shutting down' };
      if (running === undefined) return { ok: false, reason: openingFailure?.message ?? 'the database is not open yet' };
      if (writeFailure !== undefined && performance.now() - writeFailure.at < WRITE_FAILURE_HOLD_MS) {
        return { ok: false, reason: `webhook writes are failing (${writeFailure.code})` };
      }
      return await running.store.probe();
    },
    /** Inbox counts by state, and the handler failures. */
    counts: async (): Promise<Record<InboxState, number> & { handler_failures: number }> => (await use()).store.counts(),
    /**
     * Stops accepting (new requests get 503), writes what is waiting, drains the dispatcher
     * (up to `timeoutMs`), and closes the database if the receiver opened it.
     */
    async close(timeoutMs = 5000): Promise<void> {
      if (closed) return;
      closed = true;
      if (running === undefined) return;
      // Every step within what is left of `timeoutMs`; the (referenced) timers keep the process
      // alive until this resolves.
      const deadline = performance.now() + timeoutMs;
      const left = () => Math.max(0, deadline - performance.now());
      const within = async (work: Promise<unknown>, atMostMs = Infinity) => {
        const timeout = new AbortController();
        await Promise.race([work.catch(() => undefined), delay(Math.min(atMostMs, left()), undefined, { signal: timeout.signal }).catch(() => undefined)]);
        timeout.abort();
      };
      // Commands stop handing events to this receiver first (those handed before are drained
      // below); a database that does not answer costs the drain a quarter of the time at most.
      await within(running.presence?.stop() ?? Promise.resolve(), Math.min(500, timeoutMs / 4));
      await within(running.groupCommit.close());
      // The store's close is quick (a few milliseconds); keep time for it.
      await running.dispatcher.close(Math.max(0, left() - Math.min(100, timeoutMs / 4)));
      if (ownsStore) {
        await within(
          running.store.close().catch((error: unknown) => logger.warn({ code: describeStorageError(error).code }, 'error while closing the database')),
        );
      }
    },
  };
  return receiver;
}

export type Receiver = ReturnType<typeof createReceiver>;
