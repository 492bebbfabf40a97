// Which part of the standalone server a request's token opens. Four tokens, one scope each: the
// dashboard token opens everything, the read-only token the console without actions or personal
// data, the metrics token the Prometheus scrape only (a scraper's credential opens no console),
// the feed token the change feed only (an ATS's credential opens neither).
import { authorized, tokenDigest } from '../console/auth.js';

export type Scope = 'full' | 'read-only' | 'metrics' | 'feed';

/** The tokens' digests; a scope without a token is not served. */
export interface AccessTokens {
  full: Buffer | undefined;
  readOnly: Buffer | undefined;
  metrics: Buffer | undefined;
  feed: Buffer | undefined;
}

export interface AccessTokenOptions {
  dashboardToken?: string | undefined;
  dashboardReadonlyToken?: string | undefined;
  metricsToken?: string | undefined;
  feedToken?: string | undefined;
}

const digestOf = (token: string | undefined) => (token === undefined || token === '' ? undefined : tokenDigest(token));

/** Digests of the tokens given; one too short to keep anyone out throws (DashboardTokenError). */
export function accessTokens(options: AccessTokenOptions): AccessTokens {
  return {
    full: digestOf(options.dashboardToken),
    readOnly: digestOf(options.dashboardReadonlyToken),
    metrics: digestOf(options.metricsToken),
    feed: digestOf(options.feedToken),
  };
}

/** The scope of the token a request carries (Bearer, or Basic's password); none: no token of ours. */
export function scopeOf(header: string | undefined, tokens: AccessTokens): Scope | undefined {
  // Every configured digest is compared, so that timing does not tell which scope matched.
  const matches: Array<[Scope, boolean]> = [
    ['full', tokens.full !== undefined && authorized(header, tokens.full)],
    ['read-only', tokens.readOnly !== undefined && authorized(header, tokens.readOnly)],
    ['metrics', tokens.metrics !== undefined && authorized(header, tokens.metrics)],
    ['feed', tokens.feed !== undefined && authorized(header, tokens.feed)],
  ];
  return matches.find(([, matched]) => matched)?.[0];
}

export const servesMetrics = (tokens: AccessTokens): boolean => tokens.full !== undefined || tokens.metrics !== undefined;
export const servesConsole = (tokens: AccessTokens): boolean => tokens.full !== undefined || tokens.readOnly !== undefined;
// A change holds personal data: the read-only console token, which masks it, never opens the feed.
export const servesFeed = (tokens: AccessTokens): boolean => tokens.full !== undefined || tokens.feed !== undefined;
