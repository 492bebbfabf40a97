// Who may see the console: holders of its token, sent as HTTP Basic's password (any user name,
// so a browser's own prompt works) or as a Bearer token. Compared in constant time: both sides
// are hashed first, so neither the content nor the length of the token leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';

/** Shorter tokens can be guessed online; 16 random characters cannot. */
export const MIN_TOKEN_LENGTH = 16;

class DashboardTokenError extends Error {
  /** Always `DashboardTokenError`, to tell it apart from other errors. */
  override name = 'DashboardTokenError';
}

/** The token's digest; throws when there is no token or it is too short to keep anyone out. */
export function tokenDigest(token: string | undefined): Buffer {
  if (token === undefined || token === '') {
    throw new DashboardTokenError(
      'The console needs a token: receiver.dashboard({ token }) (serve: --dashboard-token or PREQUAL_HOOKS_DASHBOARD_TOKEN). ' +
        'It shows candidates and can reprocess events, so it is never served open. Generate one with `openssl rand -hex 24`.',
    );
  }
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new DashboardTokenError(
      `The console token is ${token.length} characters long; it needs at least ${MIN_TOKEN_LENGTH}, since anyone who reaches the console can try tokens. ` +
        'Generate one with `openssl rand -hex 24`.',
    );
  }
  return createHash('sha256').update(token).digest();
}

/** The digest of the token an Authorization header carries (Bearer, or Basic's password); none without one. */
export function offeredDigest(header: string | undefined): Buffer | undefined {
  if (header === undefined) return undefined;
  const [scheme = '', value = ''] = header.split(' ', 2);
  let offered: string | undefined;
  if (/^bearer$/i.test(scheme)) offered = value.trim();
  else if (/^basic$/i.test(scheme)) {
    const decoded = Buffer.from(value.trim(), 'base64').toString('utf8');
    offered = decoded.includes(':') ? decoded.slice(decoded.indexOf(':') + 1) : undefined;
  }
  return offered === undefined ? undefined : createHash('sha256').update(offered).digest();
}

/** Whether an Authorization header carries the token (Bearer, or Basic's password). */
function authorized(header: string | undefined, digest: Buffer): boolean {
  const offered = offeredDigest(header);
  return offered !== undefined && timingSafeEqual(offered, digest);
}

const UNAUTHORIZED_BODY = {
  error: {
    code: 'UNAUTHORIZED',
    message: 'This needs the dashboard token: HTTP Basic (any user name, the token as password) or Authorization: Bearer <token>.',
    details: {},
  },
};

/** Answers 401 (with the Basic challenge, so a browser asks) to requests without the token. */
export function requireToken(digest: Buffer): RequestHandler {
  return (req, res, next) => {
    if (authorized(req.headers.authorization, digest)) return next();
    res.status(401).set('WWW-Authenticate', 'Basic realm="prequal-hooks"').json(UNAUTHORIZED_BODY);
  };
}
