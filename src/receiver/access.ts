// Which part of the standalone server a request's token opens. Four tokens, one scope each: the
// dashboard token opens everything, the read-only token the console without actions or personal
// data, the metrics token the Prometheus scrape only (a scraper's credential opens no console),
// the feed token the change feed only (an ATS's credential opens neither). And an account's feed
// token, from the registry (`accounts set-feed-token`), opens that account's feed and nothing else.
import { timingSafeEqual } from 'node:crypto';
import { offeredDigest, tokenDigest } from '../console/auth.js';

type Scope = 'full' | 'read-only' | 'metrics' | 'feed' | 'account-feed';

/** What a request's token opens: a scope, and for an account's feed token its account. */
export type Access = { scope: Exclude<Scope, 'account-feed'> } | { scope: 'account-feed'; account: string };

/** The digest of an account's feed token (src/accounts/feed-tokens.ts). */
export interface AccountFeedToken {
  readonly account: string;
  readonly digest: Buffer;
}

/** The tokens' digests; a scope without a token is not served. */
export interface AccessTokens {
  full: Buffer | undefined;
  readOnly: Buffer | undefined;
  metrics: Buffer | undefined;
  feed: Buffer | undefined;
  /** The accounts' feed tokens, as the registry last said. */
  accountFeeds: readonly AccountFeedToken[];
}

export interface AccessTokenOptions {
  dashboardToken?: string | undefined;
  dashboardReadonlyToken?: string | undefined;
  metricsToken?: string | undefined;
  feedToken?: string | undefined;
}

const digestOf = (token: string | undefined) => (token === undefined || token === '' ? undefined : tokenDigest(token));

/** Digests of the tokens given; one too short to keep anyone out throws (DashboardTokenError). */
export function accessTokens(options: AccessTokenOptions, accountFeeds: readonly AccountFeedToken[] = []): AccessTokens {
  return {
    full: digestOf(options.dashboardToken),
    readOnly: digestOf(options.dashboardReadonlyToken),
    metrics: digestOf(options.metricsToken),
    feed: digestOf(options.feedToken),
    accountFeeds,
  };
}

const matches = (offered: Buffer, digest: Buffer | undefined) => digest !== undefined && timingSafeEqual(offered, digest);

/** What the token a request carries (Bearer, or Basic's password) opens; none: no token of ours. */
export function accessOf(header: string | undefined, tokens: AccessTokens): Access | undefined {
  const offered = offeredDigest(header);
  if (offered === undefined) return undefined;
  // Every digest is compared, so that timing does not tell which scope, or which account, matched.
  const scopes: Array<[Exclude<Scope, 'account-feed'>, boolean]> = [
    ['full', matches(offered, tokens.full)],
    ['read-only', matches(offered, tokens.readOnly)],
    ['metrics', matches(offered, tokens.metrics)],
    ['feed', matches(offered, tokens.feed)],
  ];
  let account: string | undefined;
  for (const token of tokens.accountFeeds) if (matches(offered, token.digest)) account ??= token.account;
  const scope = scopes.find(([, matched]) => matched)?.[0];
  if (scope !== undefined) return { scope };
  return account === undefined ? undefined : { scope: 'account-feed', account };
}

export const servesMetrics = (tokens: AccessTokens): boolean => tokens.full !== undefined || tokens.metrics !== undefined;
export const servesConsole = (tokens: AccessTokens): boolean => tokens.full !== undefined || tokens.readOnly !== undefined;
// A change holds personal data: the read-only console token, which masks it, never opens the feed.
export const servesFeed = (tokens: AccessTokens): boolean =>
  tokens.full !== undefined || tokens.feed !== undefined || tokens.accountFeeds.length > 0;
