// GET /changes (docs/changes.md): a page of an account's changes after a cursor as JSON, or with
// `Accept: text/event-stream` the same changes then followed live as server-sent events. The
// token is checked by the route (routes.ts); here, the parameters, the answers and the streams.
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnknownAccountError } from '../accounts/errors.js';
import { ConfigurationError } from '../errors.js';
import { ChangesDroppedError, CursorAheadError, QueryParameterError } from '../query/index.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import { errorAnswer, type Answer } from '../receive/answer.js';
import { writeAnswer } from '../receive/node-http.js';
import type { Receiver } from '../receiver/create-receiver.js';
import type { Logger } from '../logging.js';

/** Live streams at most at once; past it, 503 BUSY (a stream holds a connection and polls the store). */
const MAX_FEED_STREAMS = 64;
/** A comment this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

/** The live streams of the feed: bounded, and ended together when the server stops; where a failed read is told. */
export interface FeedStreams {
  readonly open: Set<AbortController>;
  readonly max: number;
  readonly logger: Pick<Logger, 'error'>;
}

export function feedStreams(logger: Pick<Logger, 'error'>, max = MAX_FEED_STREAMS): FeedStreams {
  return { open: new Set(), max, logger };
}

/** Ends every live stream (the server is stopping): each writes nothing more and closes. */
export function endFeedStreams(streams: FeedStreams): void {
  for (const stream of streams.open) stream.abort();
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

/**
 * Answers GET /changes for an authorized request: a page, or a live stream. `only`: the account
 * whose feed token the request carries, which opens that account's feed and no other (403).
 */
export function serveFeed(receiver: Receiver, streams: FeedStreams, req: IncomingMessage, res: ServerResponse, only?: string): void {
  req.resume();
  void (async () => {
    try {
      const request = feedRequest(req);
      if (only !== undefined && request.account !== only) {
        writeAnswer(
          res,
          errorAnswer(403, 'FORBIDDEN', `This feed token opens the changes of account "${only}" only: GET /changes?account=${only}.`, {}),
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
 * The changes after the cursor, then the ones committed later, as events (`id: <seq>`,
 * `data: <change>`), until the client goes or the server stops. A cursor retention has passed,
 * a cursor past the account's last change, or an unknown account, is answered before the stream
 * starts (410, 409, 404).
 */
async function stream(members: ReturnType<Receiver['forAccount']>, request: FeedRequest, streams: FeedStreams, res: ServerResponse) {
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
    for await (const change of members.changes({ after: request.after, signal: controller.signal })) {
      if (!res.write(`id: ${change.seq}\ndata: ${JSON.stringify(change)}\n\n`)) await once(res, 'drain', { signal: controller.signal });
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
