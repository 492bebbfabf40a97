// The standalone server's routes: the webhook path straight into the framework-free intake, the
// probes, the Prometheus scrape, the change feed and the console. One function a route; `route` picks one.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer } from '../receive/answer.js';
import { writeAnswer } from '../receive/node-http.js';
import type { Receiver } from '../receiver/create-receiver.js';
import { accessOf, servesConsole, servesFeed, servesMetrics, type AccessTokens } from '../receiver/access.js';
import { forbidden, shuttingDown, starting, unauthorized } from '../receiver/denials.js';
import { answerFeed, type FeedStreams } from '../receiver/feed.js';

/** What the routes read of the running server; the assembly (start-standalone.ts) fills it in as it starts and stops. */
export interface StandaloneState {
  path: string;
  /**
   * Digests of the console, metrics and feed tokens, and of the accounts' feed tokens (kept
   * current from the registry); a part none of whose tokens is set is not served.
   */
  tokens: AccessTokens;
  /** Made once the server listens: requests that come first get 503 STARTING. */
  receiver: Receiver | undefined;
  intake: ReturnType<Receiver['nodeHandler']> | undefined;
  /** The consoles (Express apps holding receiver.dashboard), full and read-only, as their tokens are set. */
  dashboard: { full?: ConsoleApp; readOnly?: ConsoleApp } | undefined;
  /** The live streams of the feed, ended when the server stops. */
  feedStreams: FeedStreams;
  closing: boolean;
}

type ConsoleApp = (req: IncomingMessage, res: ServerResponse) => void;

type Route = (state: StandaloneState, req: IncomingMessage, res: ServerResponse) => void;

const webhook: Route = (state, req, res) => {
  if (state.closing) return shuttingDown(res);
  if (state.intake === undefined) return starting(req, res);
  void state.intake(req, res);
};

const healthz: Route = (_state, _req, res) => writeAnswer(res, { status: 200, headers: {}, body: { status: 'ok' } });

/** Ready: not stopping, started, handlers keeping up, and the database taking a write. */
async function readiness(state: StandaloneState): Promise<{ ok: boolean; reason?: string }> {
  const { receiver } = state;
  if (state.closing) return { ok: false, reason: 'shutting down' };
  if (receiver === undefined) return { ok: false, reason: 'starting' };
  if (receiver.saturated()) {
    const stuck = receiver.stuckHandlerCalls();
    return { ok: false, reason: stuck > 0 ? `handlers saturated: ${stuck} handler calls stuck past their timeout` : 'handlers saturated' };
  }
  return await receiver.probe();
}

// Ready or not, and why not: nothing more, since probes carry no token (the inbox's counts are
// /metrics' and the console's), and a probe every few seconds should not count the inbox.
const readyz: Route = (state, _req, res) => {
  void (async () => {
    const ready = await readiness(state);
    writeAnswer(res, {
      status: ready.ok ? 200 : 503,
      headers: {},
      body: { status: ready.ok ? 'ready' : 'not_ready', ...(ready.reason && { reason: ready.reason }) },
    });
  })();
};

const metrics: Route = (state, req, res) => {
  const scope = accessOf(req.headers.authorization, state.tokens)?.scope;
  if (scope === undefined) return unauthorized(res, 'the metrics token or the dashboard token');
  if (scope === 'read-only') return forbidden(req, res, 'The read-only console token does not open /metrics: use the metrics token.');
  if (scope === 'feed') return forbidden(req, res, 'The feed token opens GET /changes only, not /metrics.');
  if (scope === 'account-feed') return forbidden(req, res, "An account's feed token opens its GET /changes only, not /metrics.");
  void (async () => {
    const registry = state.receiver?.metrics();
    if (registry === undefined) {
      writeAnswer(res, errorAnswer(503, 'STARTING', 'The receiver is starting; retry.'));
      return;
    }
    const text = await registry.metrics();
    res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  })();
};

// The feed answers as a mounted `receiver.feed()` does, with the server's tokens.
const changes: Route = (state, req, res) =>
  answerFeed({ source: state.receiver, tokens: state.tokens, streams: state.feedStreams, closing: state.closing }, req, res);

const dashboard: Route = (state, req, res) => {
  const scope = accessOf(req.headers.authorization, state.tokens)?.scope;
  if (scope === 'metrics') return forbidden(req, res, 'The metrics token opens /metrics only, not the console.');
  if (scope === 'feed') return forbidden(req, res, 'The feed token opens GET /changes only, not the console.');
  if (scope === 'account-feed') return forbidden(req, res, "An account's feed token opens its GET /changes only, not the console.");
  if (state.dashboard === undefined) return starting(req, res);
  // No token of ours: a console answers 401 itself, with its security headers and Basic challenge.
  const app = scope === 'read-only' ? state.dashboard.readOnly : (state.dashboard.full ?? state.dashboard.readOnly);
  app!(req, res);
};

const notFound: Route = (state, req, res) => {
  req.resume();
  writeAnswer(
    res,
    errorAnswer(
      404,
      'RESOURCE_NOT_FOUND',
      `Nothing is served at ${req.method} ${(req.url ?? '/').split('?')[0]}. Webhooks go to POST ${state.path} (or ${state.path}/<route key> for an account).`,
    ),
  );
};

const ROUTE_KEY = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The route key of `<path>/<route key>`, or of `<path>/<route key>/`: an account's webhook path
 * (docs/accounts.md), with the one trailing slash the adapters take too (`routeKeyOfPath`).
 */
export function routeKeyUnder(path: string, url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith(`${path}/`)) return undefined;
  const key = url.slice(path.length + 1).replace(/\/$/, '');
  return ROUTE_KEY.test(key) ? key : undefined;
}

/** Which route answers a request; what is not ours is 404 in the service's envelope. */
export function route(state: StandaloneState, req: IncomingMessage): Route {
  const url = (req.url ?? '/').split('?')[0];
  if (url === state.path || url === `${state.path}/` || routeKeyUnder(state.path, url) !== undefined) return webhook;
  if (req.method === 'GET' && url === '/healthz') return healthz;
  if (req.method === 'GET' && url === '/readyz') return readyz;
  if (req.method === 'GET' && url === '/metrics' && servesMetrics(state.tokens)) return metrics;
  if (req.method === 'GET' && url === '/changes' && servesFeed(state.tokens)) return changes;
  if ((url === '/dashboard' || url?.startsWith('/dashboard/')) && servesConsole(state.tokens)) return dashboard;
  return notFound;
}
