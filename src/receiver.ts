import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { EventKind } from './events/index.js';
import { prepareDeadLetters } from './dispatch/dead-letters.js';
import { createDispatcher, type DispatcherOptions } from './dispatch/dispatcher.js';
import { createHandlerRegistry, type AnyHandler, type Handler } from './dispatch/handlers.js';
import { createLogger, type Logger } from './logging.js';
import { prepareProjection } from './project/write.js';
import { createQueries } from './query/index.js';
import { replayInto, type ReplayInput, type ReplayOptions, type ReplaySummary } from './replay/index.js';
import type { Secret } from './signature.js';
import { expressMiddleware } from './receive/express.js';
import { fetchHandler } from './receive/fetch.js';
import { createIntake, type IncomingRequest, type IntakeResult } from './receive/intake.js';
import { nodeHandler, type ResultListener } from './receive/node-http.js';
import { configureDatabase, openDatabase, type SqliteDatabase } from './store/sqlite/database.js';
import { createGroupCommit } from './store/group-commit.js';
import { prepareInbox } from './store/inbox.js';

export interface ReceiverOptions {
  /** Path of the SQLite file (created with its folder), or an open better-sqlite3 database. */
  database: string | SqliteDatabase;
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
  /** How long a write waits on another connection's lock before answering 503 (ms). Default 2000. */
  busyTimeoutMs?: number;
  /** A pino logger; default: JSON lines at level `warn` on stdout, with PII redacted. */
  logger?: Logger;
  /** Called after each request is answered (for access logs and metrics). */
  onRequest?: ResultListener;
  /** Batch size, handler concurrency, attempts and retry delay of the dispatcher. */
  dispatch?: DispatcherOptions;
}

/**
 * Everything an agency backend needs: the intake (middleware, node:http and fetch handlers),
 * the durable inbox behind it, and (next) the dispatcher and the projected state.
 */
export function createReceiver(options: ReceiverOptions) {
  const logger = options.logger ?? createLogger({ level: 'warn' });
  const secrets = [...(options.secrets ?? []), ...(options.secret === undefined ? [] : [options.secret])];
  const ownsDatabase = typeof options.database === 'string';
  const storeOptions = { busyTimeoutMs: options.busyTimeoutMs ?? 2000 };
  const db =
    typeof options.database === 'string'
      ? openDatabase(options.database, storeOptions)
      : configureDatabase(options.database, storeOptions);

  const inbox = prepareInbox(db);
  const projection = prepareProjection(db);
  const handlers = createHandlerRegistry();
  const dispatcher = createDispatcher(
    { db, inbox, projection, handlers, logger, intakeBusy: () => groupCommit.waiting() > 0 },
    options.dispatch,
  );
  // The next turn: the answers of a commit go out before any projection starts.
  const groupCommit = createGroupCommit(db, inbox, { onCommitted: () => setImmediate(() => dispatcher.notify()) });
  const deadLetters = prepareDeadLetters(inbox, () => dispatcher.start());
  let intake;
  try {
    intake = createIntake({
      secrets,
      allowUnsigned: options.allowUnsigned ?? false,
      ...(options.maxBodyBytes !== undefined && { maxBodyBytes: options.maxBodyBytes }),
      ...(options.signatureHeader !== undefined && { signatureHeader: options.signatureHeader }),
      ...(options.eventHeader !== undefined && { eventHeader: options.eventHeader }),
      store: groupCommit.append,
      logger,
    });
  } catch (error) {
    if (ownsDatabase) db.close();
    throw error;
  }

  // Crash recovery: whatever a previous run stored but did not process is taken up now.
  dispatcher.start();

  let closed = false;
  return {
    /** The open SQLite database (one writer connection for the whole receiver). */
    database: db as SqliteDatabase,
    /** The framework-free core: raw bytes and headers in, an answer out, the event stored. */
    receive: (request: IncomingRequest): Promise<IntakeResult> => intake.receive(request),
    /** Express middleware: `app.post('/webhooks', receiver.middleware())`. */
    middleware: (): RequestHandler => expressMiddleware(intake, options.onRequest),
    /** A node:http listener: `http.createServer(receiver.nodeHandler())`. */
    nodeHandler: (): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
      nodeHandler(intake, options.onRequest),
    /** A fetch handler: `(request: Request) => Promise<Response>`. */
    fetchHandler: () => fetchHandler(intake),
    /**
     * Calls `handler` for each distinct event of the kind, after its projection committed, at
     * least once (again after a crash), in arrival order per candidate. A throwing or rejecting
     * handler is retried with exponential backoff, then recorded as a dead letter.
     */
    on<K extends EventKind>(kind: K, handler: Handler<K>, handlerOptions?: { name?: string }): void {
      handlers.on(kind, handler, handlerOptions);
      dispatcher.start();
    },
    /** Like `on`, for every kind this version knows. */
    onAny(handler: AnyHandler, handlerOptions?: { name?: string }): void {
      handlers.onAny(handler, handlerOptions);
      dispatcher.start();
    },
    /** Reads of the projected state: campaigns with stats, candidate lists, credits. */
    query: createQueries(db),
    /** Unknown and invalid events, failed handlers: list and reprocess them. */
    deadLetters,
    /** Replays fixture events (objects, .json, .ndjson, folders) through the same path as HTTP. */
    async replay(inputs: Iterable<ReplayInput> | ReplayInput, replayOptions?: ReplayOptions): Promise<ReplaySummary> {
      const summary = await replayInto(
        { db, inbox, projection, wantsHandlers: (kind) => handlers.for(kind).length > 0 },
        inputs,
        replayOptions,
      );
      dispatcher.start();
      return summary;
    },
    /** Resolves once every stored event is projected and its handlers have run. */
    drain: (): Promise<void> => dispatcher.drain(),
    /** Whether processing has fallen far enough behind to refuse readiness. */
    saturated: (): boolean => dispatcher.saturated(),
    /** Inbox counts by state. */
    counts: () => inbox.counts(),
    /**
     * Stops accepting (new requests get 503), writes what is waiting, drains the dispatcher
     * (up to `timeoutMs`), and closes the database if the receiver opened it.
     */
    async close(timeoutMs = 5000): Promise<void> {
      if (closed) return;
      closed = true;
      groupCommit.close();
      await dispatcher.close(timeoutMs);
      if (ownsDatabase) db.close();
    },
  };
}

export type Receiver = ReturnType<typeof createReceiver>;
