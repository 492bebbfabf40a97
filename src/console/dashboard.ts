// The operator console as an Express Router (the Bull Board pattern): JSON data routes and
// server-rendered pages, mounted anywhere: `app.use('/ops', receiver.dashboard({ token }))`.
// The default account's pages are at the mount point, another account's below `/a/<account>`:
// every link and form of a page is built on its base, so it stays in the page's account.
import express, { Router, type ErrorRequestHandler } from 'express';
import { QueryParameterError } from '../query/index.js';
import type { Logger } from '../logging.js';
import { StoreUnavailableError } from '../store/errors.js';
import { UnknownAccountError } from '../accounts/errors.js';
import { serveAssets } from './assets.js';
import { requireToken, tokenDigest } from './auth.js';
import { campaignRoutes } from './campaigns.js';
import { createCsrf, type Csrf } from './csrf.js';
import { deadLetterRoutes } from './dead-letters.js';
import { destinationRoutes } from './destinations.js';
import { eventRoutes } from './events.js';
import { securityHeaders } from './headers.js';
import { overviewRoutes } from './overview.js';
import { privacyRoutes } from './privacy.js';
import { accountPages, accountsRoutes } from './accounts.js';
import { consoleData, noteRoot, scopedSource, type DashboardSource } from './source.js';

/** How `receiver.dashboard` guards and shows the operator's console. */
export interface DashboardOptions {
  /**
   * Required, at least 16 characters: requests carry it as HTTP Basic's password (any user name)
   * or as `Authorization: Bearer <token>`.
   */
  token: string;
  /** Hide the actions (reprocess, retry, export, erase), answer their POSTs 403, and never reveal personal data. Default false. */
  readOnly?: boolean;
  /** Where failures are logged (the receiver's logger by default); never with candidate data. */
  logger?: Pick<Logger, 'error'>;
}

export function createDashboard(source: DashboardSource, options: DashboardOptions): Router {
  const digest = tokenDigest(options?.token);
  const readOnly = options.readOnly ?? false;
  const csrf = createCsrf();
  const formToken = (account: string) => (readOnly ? undefined : csrf.token(account));
  const router = Router();

  router.use(securityHeaders);
  router.use((req, _res, next) => {
    noteRoot(req);
    next();
  });
  router.use(requireToken(digest));
  router.get('/assets/:name', serveAssets());
  router.use((req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    if (req.method !== 'POST') {
      res
        .status(405)
        .set('Allow', readOnly ? 'GET, HEAD' : 'GET, HEAD, POST')
        .json({ error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method} is not served here.`, details: {} } });
      return;
    }
    // The method exists; this token may not use it.
    if (readOnly) {
      res.status(403).json({ error: { code: 'FORBIDDEN', message: 'This console is read-only: actions are turned off.', details: {} } });
      return;
    }
    next();
  });

  accountsRoutes(router, source, formToken);
  // One router per account, made when the account is first shown: its data, its CSRF token.
  const routers = new Map<string, Router>();
  const pagesOf = (account: string): Router => {
    let pages = routers.get(account);
    if (pages === undefined) routers.set(account, (pages = accountRouter(source, account, formToken(account), csrf)));
    return pages;
  };
  router.use('/a/:account', accountPages(source, pagesOf, formToken));
  router.use(accountPages(source, pagesOf, formToken));

  router.use((req, res) => {
    res.status(404).json({
      error: { code: 'RESOURCE_NOT_FOUND', message: `Nothing is served at ${req.method} ${req.baseUrl}${req.path}.`, details: {} },
    });
  });
  router.use(consoleErrors(options.logger));
  return router;
}

/** No candidate data in answers or logs: parameter errors name the parameter, others only their kind. */
function consoleErrors(logger: DashboardOptions['logger']): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if (error instanceof QueryParameterError) {
      res.status(400).json(error.toJSON());
      return;
    }
    // Express decodes a path parameter (an account, an id) before the route runs: `%ZZ` is the sender's error.
    if (error instanceof URIError) {
      res.status(400).json({
        error: {
          code: 'MALFORMED_URL',
          message: 'The address is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes.',
          details: {},
        },
      });
      return;
    }
    if (error instanceof UnknownAccountError) {
      res.status(404).json({ error: { code: 'UNKNOWN_ACCOUNT', message: 'No account with this id is registered.', details: {} } });
      return;
    }
    if (error instanceof StoreUnavailableError) {
      res
        .status(503)
        .set('Retry-After', '5')
        .json({ error: { code: 'STORAGE_UNAVAILABLE', message: `The database is unavailable (${error.code}); retry.`, details: {} } });
      return;
    }
    // The route, not the URL: a query string may name a candidate.
    logger?.error(
      {
        err: { name: (error as Error)?.name, code: (error as { code?: unknown })?.code },
        method: req.method,
        route: `${req.baseUrl}${routePath(req.route)}`,
      },
      'console request failed',
    );
    res
      .status(500)
      .json({ error: { code: 'INTERNAL', message: 'The console failed to answer; the receiver logs say more.', details: {} } });
  };
}

/** The pages and actions of one account; a POST needs that account's CSRF token. */
function accountRouter(source: DashboardSource, account: string, formToken: string | undefined, csrf: Csrf): Router {
  const data = consoleData(scopedSource(source, account), formToken);
  const pages = Router();
  pages.post('/{*path}', express.urlencoded({ extended: false, limit: '16kb' }), csrf.check(account));
  overviewRoutes(pages, data);
  eventRoutes(pages, data);
  deadLetterRoutes(pages, data);
  destinationRoutes(pages, data);
  campaignRoutes(pages, data);
  privacyRoutes(pages, data);
  return pages;
}

/** The pattern of the route that failed (`/candidates/:id`), never the path with its ids. */
function routePath(route: unknown): string {
  const path = (route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : '';
}
