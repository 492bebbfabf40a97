import { createServer, maxHeaderSize as httpMaxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { errorAnswer } from './receive/answer.js';
import { writeAnswer } from './receive/node-http.js';
import { authorized, tokenDigest as digestOf } from './console/auth.js';
import { createReceiver, type Receiver, type ReceiverOptions } from './receiver.js';
import type { Logger } from './logging.js';

/** A sender that has not sent its headers within this is cut off (408). */
const HEADERS_TIMEOUT_MS = 10_000;
/** A sender that has not sent its whole request within this is cut off (408). */
const REQUEST_TIMEOUT_MS = 15_000;
/** After a stop is asked, how long new connections are still taken in (and answered 503). */
const SHUTDOWN_GRACE_MS = 100;
/** Node's limit on the total size of the request line and headers (--max-http-header-size). */
const maxHeaderSize = httpMaxHeaderSize;

export interface StandaloneOptions extends Omit<ReceiverOptions, 'onRequest' | 'logger' | 'secrets'> {
  logger: Logger;
  /**
   * The secrets, or a function that gives them once the server listens (the CLI stores and shows
   * a generated secret only then, so that a start that cannot listen shows nothing).
   */
  secrets?: ReceiverOptions['secrets'] | (() => Promise<ReceiverOptions['secrets']>);
  port?: number;
  host?: string;
  /** The webhook route. Default `/webhooks`. */
  path?: string;
  /**
   * Serves `GET /metrics` (Prometheus) and the console at `/dashboard` to requests that carry it
   * (Basic password or Bearer); none: neither is served. At least 16 characters.
   */
  dashboardToken?: string;
}

export interface Standalone {
  receiver: Receiver;
  server: Server;
  url: string;
  /** Stops accepting, finishes requests in flight, drains, closes the database. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The standalone receiver: node:http straight into the framework-free intake (no framework on
 * the webhook route), plus `GET /healthz` and `GET /readyz`. Nothing else is served.
 */
export async function startStandalone(options: StandaloneOptions): Promise<Standalone> {
  const { logger, port = 8787, host = '0.0.0.0', path = '/webhooks', secrets, dashboardToken, ...receiverOptions } = options;
  // A token too short to keep anyone out throws here, before anything listens.
  const tokenDigest = dashboardToken === undefined || dashboardToken === '' ? undefined : digestOf(dashboardToken);
  // The receiver is made once the server listens: requests that come first get 503 STARTING.
  let receiver: Receiver | undefined;
  let intake: ReturnType<Receiver['nodeHandler']> | undefined;
  const startReceiver = (resolved: ReceiverOptions['secrets']) =>
    createReceiver({
      ...receiverOptions,
      ...(resolved !== undefined && { secrets: resolved }),
      logger,
      onRequest(result, _req, startedAt) {
        logger.info(
          {
            status: result.answer.status,
            outcome: result.outcome,
            kind: result.kind,
            duplicate: result.outcome === 'duplicate',
            inboxId: result.inboxId,
            ms: Number(process.hrtime.bigint() - startedAt) / 1e6,
          },
          'webhook',
        );
      },
    });
  // The console (an Express app holding receiver.dashboard) when a token is set: /dashboard and below.
  let dashboard: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let closing = false;

  async function ready(): Promise<{ ok: boolean; reason?: string }> {
    if (closing) return { ok: false, reason: 'shutting down' };
    if (receiver === undefined) return { ok: false, reason: 'starting' };
    if (receiver.saturated()) {
      const stuck = receiver.stuckHandlerCalls();
      return { ok: false, reason: stuck > 0 ? `handlers saturated: ${stuck} handler calls stuck past their timeout` : 'handlers saturated' };
    }
    return await receiver.probe();
  }

  // Node checks the request and header timeouts every connectionsCheckingInterval (30 s by
  // default): once a second cuts a slow sender off within a second of its limit.
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, (req: IncomingMessage, res: ServerResponse) => {
    const url = (req.url ?? '/').split('?')[0];
    if (url === path) {
      if (closing) {
        writeAnswer(res, errorAnswer(503, 'SHUTTING_DOWN', 'The receiver is shutting down; retry.', {}, { 'Retry-After': '5', Connection: 'close' }));
        return;
      }
      if (intake === undefined) {
        req.resume();
        writeAnswer(res, errorAnswer(503, 'STARTING', 'The receiver is starting; retry.', {}, { 'Retry-After': '1' }));
        return;
      }
      void intake(req, res);
      return;
    }
    if (req.method === 'GET' && url === '/healthz') {
      writeAnswer(res, { status: 200, headers: {}, body: { status: 'ok' } });
      return;
    }
    if (req.method === 'GET' && url === '/readyz') {
      void (async () => {
        const state = await ready();
        const inbox = await receiver?.counts().catch(() => undefined);
        writeAnswer(res, {
          status: state.ok ? 200 : 503,
          headers: {},
          body: { status: state.ok ? 'ready' : 'not_ready', ...(state.reason && { reason: state.reason }), ...(inbox && { inbox }) },
        });
      })();
      return;
    }
    if (req.method === 'GET' && url === '/metrics' && tokenDigest !== undefined) {
      if (!authorized(req.headers.authorization, tokenDigest)) {
        writeAnswer(res, errorAnswer(401, 'UNAUTHORIZED', 'This needs the dashboard token: HTTP Basic (any user name, the token as password) or Authorization: Bearer <token>.', {}, { 'WWW-Authenticate': 'Basic realm="prequal-hooks"' }));
        return;
      }
      void (async () => {
        const registry = receiver?.metrics();
        if (registry === undefined) {
          writeAnswer(res, errorAnswer(503, 'STARTING', 'The receiver is starting; retry.'));
          return;
        }
        const text = await registry.metrics();
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
      })();
      return;
    }
    if (tokenDigest !== undefined && (url === '/dashboard' || url?.startsWith('/dashboard/'))) {
      if (dashboard === undefined) {
        req.resume();
        writeAnswer(res, errorAnswer(503, 'STARTING', 'The receiver is starting; retry.', {}, { 'Retry-After': '1' }));
        return;
      }
      dashboard(req, res);
      return;
    }
    req.resume();
    writeAnswer(res, errorAnswer(404, 'RESOURCE_NOT_FOUND', `Nothing is served at ${req.method} ${url}. Webhooks go to POST ${path}.`));
  });
  server.keepAliveTimeout = 5_000;
  // No count limit (proxies add many headers); the total size limit (Node's maxHeaderSize, 16 KiB
  // by default) still applies, answered 431 below.
  server.maxHeadersCount = 0;

  // What Node itself refuses (malformed HTTP, too slow, headers too large) gets the service's
  // envelope too, and a log line with the status actually sent.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'HEADERS_TOO_LARGE', `The request headers are larger than ${maxHeaderSize} bytes in all.`]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'REQUEST_TIMEOUT', `The request was not received in time (headers within ${HEADERS_TIMEOUT_MS / 1000} s, the whole request within ${REQUEST_TIMEOUT_MS / 1000} s).`]
          : [400, 'BAD_REQUEST', 'The request is not valid HTTP.'];
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    logger.info({ status, outcome: 'refused', code }, 'webhook');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  try {
    receiver = startReceiver(typeof secrets === 'function' ? await secrets() : secrets);
    if (dashboardToken !== undefined && dashboardToken !== '') {
      const { default: express } = await import('express');
      const app = express();
      app.disable('x-powered-by');
      app.use('/dashboard', receiver.dashboard({ token: dashboardToken }));
      dashboard = app;
    }
  } catch (error) {
    server.close();
    throw error;
  }
  intake = receiver.nodeHandler();
  const running = receiver;
  // Its first heartbeat is in before the start is announced: commands on the database see it from then on.
  await running.ready();
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    receiver: running,
    server,
    url: `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    async close(timeoutMs = 10_000): Promise<void> {
      closing = true;
      // Connections the kernel accepted but Node has not yet would be reset by closing the
      // listener at once: let them in first, to get 503 SHUTTING_DOWN.
      await delay(SHUTDOWN_GRACE_MS);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Connections taken in the moment before the listener closed have not sent their request
      // yet: give them the grace to send it (and get 503) before idle ones are closed.
      await delay(SHUTDOWN_GRACE_MS);
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), Math.max(0, timeoutMs - 2000));
      await closed;
      clearTimeout(timer);
      await running.close(Math.max(1000, timeoutMs / 2));
    },
  };
}
