import { createServer, type Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import { accessTokens } from './standalone/access.js';
import { createReceiver, type Receiver, type ReceiverOptions } from './receiver.js';
import type { Logger } from './logging.js';
import { answerClientErrors, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from './standalone/client-errors.js';
import { route, type StandaloneState } from './standalone/routes.js';

/** After a stop is asked, how long new connections are still taken in (and answered 503). */
const SHUTDOWN_GRACE_MS = 100;

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
  /** Serves the console read-only (no actions, personal data masked) to requests that carry it. At least 16 characters. */
  dashboardReadonlyToken?: string;
  /** Serves `GET /metrics` only to requests that carry it. At least 16 characters. */
  metricsToken?: string;
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
 * the webhook route), plus the probes, and with their tokens `/metrics` and the console.
 * Assembled in steps: the HTTP server and its routes, listen, then the receiver (requests that
 * come first get 503 STARTING), then the console.
 */
export async function startStandalone(options: StandaloneOptions): Promise<Standalone> {
  const { logger, port = 8787, host = '0.0.0.0', path = '/webhooks', secrets, dashboardToken, dashboardReadonlyToken, metricsToken, ...receiverOptions } = options;
  const state: StandaloneState = {
    path,
    // A token too short to keep anyone out throws here, before anything listens.
    tokens: accessTokens({ dashboardToken, dashboardReadonlyToken, metricsToken }),
    receiver: undefined,
    intake: undefined,
    dashboard: undefined,
    closing: false,
  };
  const server = httpServer(state, logger);
  await listen(server, port, host);
  try {
    const receiver = accessLogged({ ...receiverOptions, ...(secrets !== undefined && { secrets: typeof secrets === 'function' ? await secrets() : secrets }) }, logger);
    state.receiver = receiver;
    state.dashboard = await consoles(receiver, dashboardToken, dashboardReadonlyToken);
  } catch (error) {
    server.close();
    throw error;
  }
  const running = state.receiver;
  state.intake = running.nodeHandler();
  // Its first heartbeat is in before the start is announced: commands on the database see it from then on.
  await running.ready();
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    receiver: running,
    server,
    url: `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    close: (timeoutMs = 10_000) => stop(state, server, running, timeoutMs),
  };
}

function httpServer(state: StandaloneState, logger: Logger): Server {
  // Node checks the request and header timeouts every connectionsCheckingInterval (30 s by
  // default): once a second cuts a slow sender off within a second of its limit.
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 }, (req, res) => route(state, req)(state, req, res));
  server.keepAliveTimeout = 5_000;
  // No count limit (proxies add many headers); the total size limit (Node's maxHeaderSize, 16 KiB
  // by default) still applies, answered 431.
  server.maxHeadersCount = 0;
  server.on('clientError', answerClientErrors(logger));
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

/** The receiver, with one access-log line a webhook: status, outcome, kind, time; never the body. */
function accessLogged(options: Omit<ReceiverOptions, 'logger' | 'onRequest'>, logger: Logger): Receiver {
  return createReceiver({
    ...options,
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
