import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { accessTokens } from '../receiver/access.js';
import { createReceiver, type Receiver, type ReceiverOptions } from '../receiver/create-receiver.js';
import { ConfigurationError } from '../errors.js';
import { accessLogger, type Logger } from '../logging.js';
import { answerClientErrors, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from './client-errors.js';
import { route, routeKeyUnder, type StandaloneState } from './routes.js';
import { endFeedStreams, feedStreams } from '../receiver/feed.js';
import { clientAddress } from '../receive/client.js';
import { governConnections } from './connections.js';
import { refusalSummary, type RefusalSummary } from './refusals.js';
import { followFeedTokens } from '../receiver/feed-tokens.js';
import { storePorts } from '../store/store.js';

/** After a stop is asked, how long new connections are still taken in (and answered 503). */
const SHUTDOWN_GRACE_MS = 100;
/** Open connections at most: a flood of idle or slow ones cannot grow without end. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

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
   * Open connections at most. At the cap, a new connection is taken and the one that has
   * delivered least for longest is closed (the heaviest other client address first), never one
   * whose request is being answered; only when every connection is being answered is the new one
   * closed. Default 1024.
   */
  maxConnections?: number;
  /**
   * Serves `GET /metrics` (Prometheus) and the console at `/dashboard` to requests that carry it
   * (Basic password or Bearer); none: neither is served. At least 16 characters.
   */
  dashboardToken?: string;
  /** Serves the console read-only (no actions, personal data masked) to requests that carry it. At least 16 characters. */
  dashboardReadonlyToken?: string;
  /** Serves `GET /metrics` only to requests that carry it. At least 16 characters. */
  metricsToken?: string;
  /**
   * Serves the change feed, `GET /changes` (docs/changes.md), only to requests that carry it; the
   * dashboard token opens it too, the read-only one never. At least 16 characters.
   */
  feedToken?: string;
  /**
   * A live stream of the feed whose client has left 1 MiB of changes unread this long (ms) is
   * closed; meanwhile nothing more is read for it. Default 30 000.
   */
  feedStallTimeoutMs?: number;
  /** Serve HTTPS (TLS 1.2 or later) with this PEM certificate chain and key; none: plain HTTP. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /**
   * Behind a reverse proxy: a request's client is the last X-Forwarded-For entry (the one the
   * proxy added) rather than the proxy's address, in the access log and for the shares of
   * connections and of the budget of bodies. Never set without a proxy: anyone could then write
   * the address used.
   */
  trustProxy?: boolean;
}

export interface Standalone {
  receiver: Receiver;
  server: Server;
  url: string;
  /**
   * Replaces the TLS certificate and key for new connections; open ones keep theirs. Throws,
   * keeping the current pair, when they are not valid PEM. Only on an HTTPS server.
   */
  setTls(tls: { cert: string | Buffer; key: string | Buffer }): void;
  /**
   * Replaces the console, metrics and feed tokens for the requests that come from now on (a rotation
   * without restart). Throws, keeping the tokens in use, when one is under 16 characters. A
   * scope given no token is no longer served; CSRF tokens of forms already shown stop working.
   */
  setTokens(tokens: {
    dashboardToken?: string | undefined;
    dashboardReadonlyToken?: string | undefined;
    metricsToken?: string | undefined;
    feedToken?: string | undefined;
  }): Promise<void>;
  /** Stops accepting, finishes requests in flight, drains, closes the database. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * The standalone receiver: node:http straight into the framework-free intake (no framework on
 * the webhook route), plus the probes, and with their tokens `/metrics` and the console.
 * Assembled in steps: the HTTP server and its routes, listen, then the receiver (requests that
 * come first get 503 STARTING), then the console.
 */
export async function startStandalone(options: StandaloneOptions): Promise<Standalone> {
  const {
    logger,
    port = 8787,
    host = '0.0.0.0',
    path = '/webhooks',
    maxConnections = DEFAULT_MAX_CONNECTIONS,
    secrets,
    dashboardToken,
    dashboardReadonlyToken,
    metricsToken,
    feedToken,
    feedStallTimeoutMs,
    tls,
    trustProxy = false,
    ...receiverOptions
  } = options;
  checkLimits(maxConnections, feedStallTimeoutMs);
  const state: StandaloneState = {
    path,
    // A token too short to keep anyone out throws here, before anything listens.
    tokens: accessTokens({ dashboardToken, dashboardReadonlyToken, metricsToken, feedToken }),
    receiver: undefined,
    intake: undefined,
    dashboard: undefined,
    feedStreams: feedStreams(logger, feedStallTimeoutMs),
    closing: false,
  };
  const refusals = refusalSummary(logger);
  const server = httpServer(state, logger, tls, refusals);
  capConnections(server, { maxConnections, trustProxy, tls: tls !== undefined }, refusals);
  await listen(server, port, host);
  try {
    const receiver = accessLogged(
      { ...receiverOptions, ...(secrets !== undefined && { secrets: typeof secrets === 'function' ? await secrets() : secrets }) },
      logger,
      trustProxy,
      refusals,
    );
    state.receiver = receiver;
    state.dashboard = await consoles(receiver, dashboardToken, dashboardReadonlyToken);
  } catch (error) {
    server.close();
    throw error;
  }
  const running = state.receiver;
  // Behind a proxy every connection is the proxy's: its clients are told apart per request only.
  if (!trustProxy) running.screenConnections(server, { onRefused: (address) => refusals.note('RATE_LIMIT_EXCEEDED', 429, address) });
  state.intake = running.nodeHandler({
    routeKeyOf: (req) => routeKeyUnder(state.path, (req.url ?? '/').split('?')[0]),
    clientOf: (req) => clientAddress(req, trustProxy),
  });
  // Its first heartbeat is in before the start is announced: commands on the database see it from then on.
  await running.ready();
  const stopFeedTokens = await followAccountFeeds(running, state, logger);
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    receiver: running,
    server,
    url: `${tls === undefined ? 'http' : 'https'}://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    setTls(pair) {
      if (tls === undefined) throw new Error('this server listens in plain HTTP: it has no certificate to replace');
      (server as unknown as HttpsServer).setSecureContext({ ...TLS_SETTINGS, ...pair });
    },
    async setTokens(tokens) {
      // Both made before either is swapped in: a bad token changes nothing.
      const digests = accessTokens(tokens);
      const dashboard = await consoles(running, tokens.dashboardToken, tokens.dashboardReadonlyToken);
      state.tokens = { ...digests, accountFeeds: state.tokens.accountFeeds };
      state.dashboard = dashboard;
    },
    close: async (timeoutMs = 10_000) => {
      stopFeedTokens();
      await stop(state, server, running, timeoutMs);
      refusals.flush();
    },
  };
}

/** The accounts' feed tokens, read before the start is announced, then as the registry changes; returns what stops it. */
async function followAccountFeeds(receiver: Receiver, state: StandaloneState, logger: Logger): Promise<() => void> {
  return await followFeedTokens(storePorts(await receiver.store()).registry, logger, (accountFeeds) => {
    state.tokens = { ...state.tokens, accountFeeds };
  });
}

/** Limits that cannot work are refused before anything listens. */
function checkLimits(maxConnections: number, feedStallTimeoutMs: number | undefined): void {
  if (!(Number.isSafeInteger(maxConnections) && maxConnections >= 1))
    throw new ConfigurationError(`maxConnections must be a whole number from 1, got ${String(maxConnections)}`);
  if (feedStallTimeoutMs !== undefined && !(Number.isFinite(feedStallTimeoutMs) && feedStallTimeoutMs > 0))
    throw new ConfigurationError(`feedStallTimeoutMs must be a number of milliseconds above 0, got ${String(feedStallTimeoutMs)}`);
}

/** At the cap, the connection that has delivered least for longest gives way (standalone/connections.ts). */
function capConnections(
  server: Server,
  options: { maxConnections: number; trustProxy: boolean; tls: boolean },
  refusals: RefusalSummary,
): void {
  const connections = governConnections(server, { ...options, onClosed: (reason, client) => refusals.note(reason, undefined, client) });
  // A request that arrives on a connection already shut out (it was answered 503) is not served.
  server.prependListener('request', (req: IncomingMessage) => {
    if (connections.wasClosed(req.socket)) req.socket.destroy();
  });
}

/** TLS 1.2 at least (the service's own floor); Node's default ciphers otherwise. */
const TLS_SETTINGS = { minVersion: 'TLSv1.2' } as const;

function httpServer(state: StandaloneState, logger: Logger, tls: StandaloneOptions['tls'], refusals: RefusalSummary): Server {
  // Node checks the request and header timeouts every connectionsCheckingInterval (30 s by
  // default): once a second cuts a slow sender off within a second of its limit.
  const settings = { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 };
  const handle = (req: IncomingMessage, res: ServerResponse) => route(state, req)(state, req, res);
  const server =
    tls === undefined
      ? createServer(settings, handle)
      : (createHttpsServer({ ...settings, ...TLS_SETTINGS, ...tls }, handle) as unknown as Server);
  // Plain HTTP, or a failed handshake, on the TLS port: closed unanswered (never a 2xx), a debug line.
  server.on('tlsClientError', (error: NodeJS.ErrnoException) =>
    logger.debug(
      { outcome: 'tls_refused', code: error.code },
      'a TLS handshake failed (plain http:// to this https:// port?); connection closed',
    ),
  );
  server.keepAliveTimeout = 5_000;
  // No count limit (proxies add many headers); the total size limit (Node's maxHeaderSize, 16 KiB
  // by default) still applies, answered 431.
  server.maxHeadersCount = 0;
  server.on('clientError', answerClientErrors(logger, refusals));
  return server;
}

async function listen(server: Server, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * The receiver, with one access-log line a webhook it took (status, outcome, kind, time; never the
 * body), and the ones it refused counted in the summary instead.
 */
function accessLogged(
  options: Omit<ReceiverOptions, 'logger' | 'onRequest'>,
  logger: Logger,
  trustProxy: boolean,
  refusals: RefusalSummary,
): Receiver {
  const access = accessLogger(logger);
  return createReceiver({
    ...options,
    logger,
    onRequest(result, req, startedAt) {
      if (result.outcome === 'refused' || result.outcome === 'busy') {
        refusals.note(errorCodeOf(result.answer.body) ?? result.outcome, result.answer.status, clientAddress(req, trustProxy));
        return;
      }
      access.info(
        {
          ...result.trace,
          status: result.answer.status,
          client: clientAddress(req, trustProxy),
          outcome: result.outcome,
          account: result.account,
          kind: result.kind,
          duplicate: result.outcome === 'duplicate',
          inboxId: result.inboxId,
          ms: Number(process.hrtime.bigint() - startedAt) / 1e6,
        },
        'webhook',
      );
    },
  });
}

/** The code of the service's error envelope, `{"error":{"code"}}`. */
function errorCodeOf(body: unknown): string | undefined {
  const code = (body as { error?: { code?: unknown } } | undefined)?.error?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The consoles at /dashboard (Express apps holding receiver.dashboard): one a token given, the read-only one without actions. */
async function consoles(receiver: Receiver, full: string | undefined, readOnly: string | undefined): Promise<StandaloneState['dashboard']> {
  const given = (token: string | undefined): token is string => token !== undefined && token !== '';
  if (!given(full) && !given(readOnly)) return undefined;
  const { default: express } = await import('express');
  const app = (token: string, readOnlyConsole: boolean) => {
    const consoleApp = express();
    consoleApp.disable('x-powered-by');
    consoleApp.use('/dashboard', receiver.dashboard({ token, readOnly: readOnlyConsole }));
    return consoleApp;
  };
  return { ...(given(full) && { full: app(full, false) }), ...(given(readOnly) && { readOnly: app(readOnly, true) }) };
}

/** Stops accepting, finishes requests in flight, drains, closes the receiver. */
async function stop(state: StandaloneState, server: Server, receiver: Receiver, timeoutMs: number): Promise<void> {
  state.closing = true;
  // A live stream of the feed never ends by itself: ended now, so that the server's close does not wait for it.
  endFeedStreams(state.feedStreams);
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
  await receiver.close(Math.max(1000, timeoutMs / 2));
}
