// Actions are POSTs that a browser sends with the operator's Basic credentials on its own, so a
// page elsewhere could forge them. Two checks, both required: the request comes from this origin
// (Sec-Fetch-Site, else Origin, as browsers send them), and it carries a token only our own
// forms hold (an HMAC under a secret drawn at start, so it is never stored nor guessable). The
// token names the account of the form: a form of one account posted to another's path is refused.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';

export interface Csrf {
  /** What the console's forms of the account carry. */
  token(account: string): string;
  /** Refuses (403) a POST to the account's pages from another site or without the account's token. */
  check(account: string): RequestHandler;
}

export function createCsrf(): Csrf {
  const secret = randomBytes(32);
  const token = (account: string) => createHmac('sha256', secret).update(`prequal-hooks console actions\0${account}`).digest('base64url');

  function sameOrigin(req: Request): boolean {
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined) return site === 'same-origin';
    const origin = req.headers.origin;
    if (origin === undefined) return true; // not a browser's cross-site form: the token still decides
    try {
      return new URL(origin).host === req.headers.host;
    } catch {
      return false;
    }
  }

  const check = (account: string): RequestHandler => {
    const expected = Buffer.from(token(account));
    return (req, res, next) => {
      const sent = (req.body as Record<string, unknown> | undefined)?._csrf ?? req.headers['x-csrf-token'];
      // Only a string can be the token: anything else (a repeated header, a structured field) is no token.
      const offered = Buffer.from(typeof sent === 'string' ? sent : '');
      const tokenOk = offered.length === expected.length && timingSafeEqual(offered, expected);
      if (sameOrigin(req) && tokenOk) return next();
      res.status(403).json({
        error: {
          code: 'CSRF_REFUSED',
          message: "Console actions must come from the console's own pages: reload the page and submit its form again.",
          details: { sameOrigin: sameOrigin(req), token: tokenOk ? 'valid' : 'missing or invalid' },
        },
      });
    };
  };
  return { token, check };
}
