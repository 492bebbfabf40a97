// GET /changes (docs/changes.md): a page of an account's changes after a cursor as JSON, or with
// `Accept: text/event-stream` the same changes then followed live as server-sent events; the same
// answers whether `serve` serves it (src/standalone/routes.ts) or an application mounts
// `receiver.feed()` (feed-router.ts): which tokens open it, the parameters, the answers and the
// streams. A stream reads the next changes only when its client has taken the last ones
// (back-pressure), and a client that stops reading is cut rather than buffered for.
import { once } from 'node:events';
import { setImmediate as yieldToOthers } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnknownAccountError } from '../accounts/errors.js';
import { ConfigurationError } from '../errors.js';
import {
  ChangesDroppedError,
  CursorAheadError,
  QueryParameterError,
  type Change,
  type ChangePage,
  type ChangePageParameters,
  type FollowChangesOptions,
} from '../query/index.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import { errorAnswer, type Answer } from '../receive/answer.js';
import { writeAnswer } from '../receive/node-http.js';
import { withDeadline } from '../deadline.js';
import { accessOf, type AccessTokens } from './access.js';
import { forbidden, shuttingDown, starting, unauthorized } from './denials.js';
import type { Logger } from '../logging.js';

/** Live streams at most at once; past it, 503 BUSY (a stream holds a connection and polls the store). */
const MAX_FEED_STREAMS = 64;
/** A comment this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/**
 * What a stream holds for its client at most, written but not yet taken (beyond what the sockets
 * of the kernel hold): past it, nothing more is read from the database until the client has
 * taken it all, and a client that has not within the stall timeout is cut.
 */
const FEED_STALL_BYTES = 1024 * 1024;
/** How long a client may leave FEED_STALL_BYTES untaken before its stream is closed (serve --feed-stall-timeout). */
export const DEFAULT_FEED_STALL_MS = 30_000;
/**
 * Bytes a stream writes between two turns it gives the event loop: pages read and written one
 * after the other run as one task, and 64 streams catching up at once held webhooks for seconds.
 */
const YIELD_EVERY_BYTES = 64 * 1024;

/** The live streams of the feed: bounded, and ended together when the server stops; where a failed read or a cut is told. */
export interface FeedStreams {
  readonly open: Set<AbortController>;
  readonly max: number;
  /** A stream whose client leaves `bytes` untaken for `ms` is closed. */
  readonly stall: { readonly bytes: number; readonly ms: number };
  readonly logger: Pick<Logger, 'error' | 'warn'>;
}

export function feedStreams(logger: Pick<Logger, 'error' | 'warn'>, stallMs = DEFAULT_FEED_STALL_MS): FeedStreams {
  return { open: new Set(), max: MAX_FEED_STREAMS, stall: { bytes: FEED_STALL_BYTES, ms: stallMs }, logger };
}

/** Ends every live stream (the server is stopping): each writes nothing more and closes. */
export function endFeedStreams(streams: FeedStreams): void {
  for (const stream of streams.open) stream.abort();
}

/** One account's feed, as a receiver's members (`receiver.forAccount(id)`) read it. */
interface AccountFeed {
  readonly account: string;
  changesPage(parameters?: ChangePageParameters): Promise<ChangePage>;
  changes(options?: FollowChangesOptions): AsyncGenerator<Change, void, undefined>;
}

/** Where the changes are read: a receiver (an unknown account throws UnknownAccountError, a bad id ConfigurationError). */
export interface FeedSource {
  forAccount(account: string): AccountFeed;
}

/** What answers a request: the receiver (none while it starts), the tokens of the moment, the live streams, whether it stops. */
export interface FeedServer {
  source: FeedSource | undefined;
  tokens: AccessTokens;
  streams: FeedStreams;
  closing: boolean;
}

/**
 * Answers GET /changes: a change holds personal data, so only the feed token, an account's own
 * feed token (for that account), or the dashboard token opens it; the read-only console and the
 * metrics tokens are refused (403), a request without a token of ours 401.
 */
export function answerFeed(server: FeedServer, req: IncomingMessage, res: ServerResponse): void {
  const access = accessOf(req.headers.authorization, server.tokens);
  const scope = access?.scope;
  if (scope === undefined) return unauthorized(res, "the feed token, the account's feed token or the dashboard token");
  if (scope === 'read-only' || scope === 'metrics')
    return forbidden(
      req,
      res,
      `The ${scope === 'read-only' ? 'read-only console' : 'metrics'} token does not open /changes: use the feed token.`,
    );
  if (server.closing) return shuttingDown(res);
  if (server.source === undefined) return starting(req, res);
  serveFeed(server.source, server.streams, req, res, access?.scope === 'account-feed' ? access.account : undefined);
}

interface FeedRequest {
  account: string;
  after: number | undefined;
  limit: number | undefined;
  live: boolean;
}

const WHOLE = /^\d{1,15}$/;

/** A whole number parameter, or a QueryParameterError naming it. */
function whole(name: string, text: string | null | undefined): number | undefined {
  if (text === null || text === undefined) return undefined;
  if (!WHOLE.test(text)) throw new QueryParameterError(name, `must be a whole number, got "${text}"`);
  return Number(text);
}

/** The request's parameters; `Last-Event-ID` (a reconnecting event source) takes the place of `after`. */
function feedRequest(req: IncomingMessage): FeedRequest {
  const query = new URL(req.url ?? '/', 'http://feed').searchParams;
  const live = (req.headers.accept ?? '').includes('text/event-stream');
  const lastEventId = req.headers['last-event-id'];
  const resumed = live && typeof lastEventId === 'string' && lastEventId !== '' ? whole('Last-Event-ID', lastEventId) : undefined;
  return {
    account: query.get('account') ?? DEFAULT_ACCOUNT,
    after: resumed ?? whole('after', query.get('after')),
    limit: whole('limit', query.get('limit')),
    live,
  };
}

/** The envelope of what went wrong, or undefined for an error that is ours (500, logged by the caller). */
function answerOf(error: unknown): Answer | undefined {
  if (error instanceof ChangesDroppedError) {
    const answer = errorAnswer(410, error.code, error.message, { after: error.after, oldest: error.oldest });
    return { ...answer, body: { ...(answer.body as object), oldest: error.oldest } };
  }
  if (error instanceof CursorAheadError) {
    const answer = errorAnswer(409, error.code, error.message, { after: error.after, head: error.head });
    return { ...answer, body: { ...(answer.body as object), head: error.head } };
  }
  if (error instanceof QueryParameterError) return { status: 400, headers: {}, body: error.toJSON() };
  if (error instanceof ConfigurationError) return errorAnswer(400, 'VALIDATION_ERROR', error.message, { account: error.message });
  if (error instanceof UnknownAccountError) return errorAnswer(404, 'RESOURCE_NOT_FOUND', error.message);
  return undefined;
}

function failed(res: ServerResponse, error: unknown, logger: Pick<Logger, 'error'>): void {
  let answer = answerOf(error);
  if (answer === undefined) {
    logger.error({ err: { message: (error as Error).message } }, 'GET /changes: the changes could not be read');
    answer = errorAnswer(500, 'INTERNAL_ERROR', 'The changes could not be read; retry.');
  }
  if (!res.headersSent) writeAnswer(res, answer);
  else if (!res.writableEnded) res.end(`event: error\ndata: ${JSON.stringify(answer.body)}\n\n`);
}

/** Where the feed is mounted in an application (Express's `baseUrl`); '' in serve. */
function mountOf(req: IncomingMessage): string {
  return (req as IncomingMessage & { baseUrl?: string }).baseUrl ?? '';
}

/**
 * Answers GET /changes for an authorized request: a page, or a live stream. `only`: the account
 * whose feed token the request carries, which opens that account's feed and no other (403).
 */
function serveFeed(receiver: FeedSource, streams: FeedStreams, req: IncomingMessage, res: ServerResponse, only?: string): void {
  req.resume();
  void (async () => {
    try {
      const request = feedRequest(req);
      if (only !== undefined && request.account !== only) {
        writeAnswer(
          res,
          errorAnswer(
            403,
            'FORBIDDEN',
            `This feed token opens the changes of account "${only}" only: GET ${mountOf(req)}/changes?account=${only}.`,
            {},
          ),
        );
        return;
      }
      const members = receiver.forAccount(request.account);
      if (!request.live) {
        const page = await members.changesPage({ after: request.after, limit: request.limit });
        writeAnswer(res, { status: 200, headers: { 'Cache-Control': 'no-store' }, body: page });
        return;
      }
      await stream(members, request, streams, res);
    } catch (error) {
      failed(res, error, streams.logger);
    }
  })();
}

/**
 * Closes the stream of a client that stopped reading with a reset, so that the kernel drops what
 * it still holds for it too (a close would keep sending it); on TLS, where a socket cannot be
 * reset, it is destroyed.
 */
function cut(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null) return void res.destroy();
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

/**
 * Whether the client took what the stream holds for it (a 'drain') within `ms`; false when it did
 * not. Rejects when `signal` aborts (the client went, or the server stops).
 */
async function drained(res: ServerResponse, ms: number, signal: AbortSignal): Promise<boolean> {
  const took = once(res, 'drain', { signal }).then(() => true);
  return (await withDeadline(took, ms, { unref: true })) ?? false;
}

/**
 * The changes after the cursor, then the ones committed later, as events (`id: <seq>`,
 * `data: <change>`), until the client goes, the server stops, or the client is cut for not
 * reading. A cursor retention has passed, a cursor past the account's last change, or an unknown
 * account, is answered before the stream starts (410, 409, 404).
 */
async function stream(members: AccountFeed, request: FeedRequest, streams: FeedStreams, res: ServerResponse) {
  if (streams.open.size >= streams.max) {
    writeAnswer(res, errorAnswer(503, 'BUSY', `${streams.max} change streams are open; retry later.`, {}, { 'Retry-After': '5' }));
    return;
  }
  const controller = new AbortController();
  streams.open.add(controller);
  res.once('close', () => controller.abort());
  let keepAlive: NodeJS.Timeout | undefined;
  try {
    // Checked first, so that 410, 409 and 404 are statuses rather than events.
    await members.changesPage({ after: request.after, limit: 1 });
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    res.write('retry: 1000\n: following the changes\n\n');
    keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    let sinceYield = 0;
    for await (const change of members.changes({ after: request.after, signal: controller.signal })) {
      // As bytes: what waits for the client is then one copy, not a string and the copy made to send it.
      const event = Buffer.from(`id: ${change.seq}\ndata: ${JSON.stringify(change)}\n\n`);
      res.write(event);
      // The next change is read only once this one fits under the bound: a client that stops
      // reading holds the bound and a page of the follower, never the account's feed.
      if (res.writableLength >= streams.stall.bytes && !(await drained(res, streams.stall.ms, controller.signal))) {
        streams.logger.warn(
          { account: members.account, unread: res.writableLength, after: change.seq },
          `GET /changes: closed a live stream of account "${members.account}" whose client had not read ${streams.stall.bytes} bytes of changes in ${streams.stall.ms / 1000} s (it may reconnect with Last-Event-ID)`,
        );
        cut(res);
        return;
      }
      sinceYield += event.length;
      if (sinceYield >= YIELD_EVERY_BYTES) {
        sinceYield = 0;
        await yieldToOthers();
      }
    }
    res.end();
  } catch (error) {
    if (controller.signal.aborted) res.end();
    else failed(res, error, streams.logger);
  } finally {
    clearInterval(keepAlive);
    streams.open.delete(controller);
  }
}
