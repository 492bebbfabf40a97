// The operator console as an Express Router (the Bull Board pattern): JSON data routes and
// server-rendered pages, mounted anywhere: `app.use('/ops', receiver.dashboard({ token }))`.
import express, { Router, type ErrorRequestHandler } from 'express';
import { QueryParameterError } from '../query/index.js';
import type { Logger } from '../logging.js';
import { StoreUnavailableError } from '../store/store.js';
import { serveAssets } from './assets.js';
import { requireToken, tokenDigest } from './auth.js';
import { campaignRoutes } from './campaigns.js';
import { createCsrf } from './csrf.js';
import { deadLetterRoutes } from './dead-letters.js';
import { eventRoutes } from './events.js';
import { securityHeaders } from './headers.js';
import { overviewRoutes } from './overview.js';
import { privacyRoutes } from './privacy.js';
import { consoleData, type DashboardSource } from './source.js';

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
  const data = consoleData(source, readOnly ? undefined : csrf.token);
  const router = Router();

  router.use(securityHeaders);
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
  router.post('/{*path}', express.urlencoded({ extended: false, limit: '16kb' }), csrf.check);

  overviewRoutes(router, data);
  eventRoutes(router, data);
  deadLetterRoutes(router, data);
  campaignRoutes(router, data);
  privacyRoutes(router, data);

  router.use((req, res) => {
    res.status(404).json({
      error: { code: 'RESOURCE_NOT_FOUND', message: `Nothing is served at ${req.method} ${req.baseUrl}${req.path}.`, details: {} },
    });
  });
  // No candidate data in answers or logs: parameter errors name the parameter, others only their kind.
  const failed: ErrorRequestHandler = (error: unknown, req, res, _next) => {
    if (error instanceof QueryParameterError) {
      res.status(400).json(error.toJSON());
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
    options.logger?.error(
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
  router.use(failed);
  return router;
}

/** The pattern of the route that failed (`/candidates/:id`), never the path with its ids. */
function routePath(route: unknown): string {
  const path = (route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : '';
}
