import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { createLogger, type Logger } from './logging.js';
import type { Secret } from './signature.js';
import { expressMiddleware } from './receive/express.js';
import { fetchHandler } from './receive/fetch.js';
import { createIntake, type IncomingRequest, type IntakeResult } from './receive/intake.js';
import { nodeHandler, type ResultListener } from './receive/node-http.js';
import { configureDatabase, openDatabase, type SqliteDatabase } from './store/database.js';
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
  const groupCommit = createGroupCommit(db, inbox);
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

  let closed = false;
  return {
    /** The open SQLite database (one writer connection for the whole receiver). */
    database: db,
    /** The framework-free core: raw bytes and headers in, an answer out, the event stored. */
    receive: (request: IncomingRequest): Promise<IntakeResult> => intake.receive(request),
    /** Express middleware: `app.post('/webhooks', receiver.middleware())`. */
    middleware: (): RequestHandler => expressMiddleware(intake, options.onRequest),
    /** A node:http listener: `http.createServer(receiver.nodeHandler())`. */
    nodeHandler: (): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) =>
      nodeHandler(intake, options.onRequest),
    /** A fetch handler: `(request: Request) => Promise<Response>`. */
    fetchHandler: () => fetchHandler(intake),
    /** Inbox counts by state. */
    counts: () => inbox.counts(),
    /** Stops accepting, writes what is waiting, and closes the database if the receiver opened it. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      groupCommit.close();
      if (ownsDatabase) db.close();
    },
  };
}

export type Receiver = ReturnType<typeof createReceiver>;
