// `receiver.feed()`: the change feed in an application's own Express app, answered as `serve`
// answers GET /changes (feed.ts: pages, server-sent events, the same tokens, statuses and errors).
// The accounts' own feed tokens are followed from the registry once a feed is mounted, and the
// live streams end when the receiver closes.
import { Router } from 'express';
import { ConfigurationError } from '../errors.js';
import type { Logger } from '../logging.js';
import type { AccountsRegistry } from '../store/accounts-registry.js';
import { accessTokens, servesFeed, type AccountFeedToken } from './access.js';
import { answerFeed, endFeedStreams, feedStreams, type FeedSource, type FeedStreams } from './feed.js';
import { followFeedTokens } from './feed-tokens.js';

/** Shorter than this, a token can be guessed by whoever reaches the feed. */
const MIN_FEED_TOKEN_LENGTH = 16;

/**
 * What `receiver.feed()` takes (docs/changes.md, "Over HTTP"). Without `token` and
 * `dashboardToken`, only the accounts' own feed tokens open the feed, and while none exists its
 * route is not answered (the request goes on to the application's next route, as `serve` answers 404).
 */
export interface FeedOptions {
  /** Opens every account's feed, and nothing else (as `serve --feed-token`). At least 16 characters. */
  token?: string;
  /**
   * Opens the feed too, as the console's full token does in `serve` (`--dashboard-token`): give
   * the token your `receiver.dashboard({ token })` has, if its holders may read the feed. At least
   * 16 characters, and not `token`.
   */
  dashboardToken?: string;
  /**
   * A live stream whose client has left 1 MiB of changes unread this long (ms) is closed;
   * meanwhile nothing more is read for it (`serve --feed-stall-timeout`). Default 30 000.
   */
  stallTimeoutMs?: number;
}

/** The feeds a receiver has mounted: made by `router`, ended by `close`. */
export interface MountedFeeds {
  router(options: FeedOptions): Router;
  /** Ends every live stream and stops following the tokens; requests from now on get 503 SHUTTING_DOWN. */
  close(): void;
}

function checkedOptions(options: FeedOptions): void {
  for (const [name, token] of [
    ['token', options.token],
    ['dashboardToken', options.dashboardToken],
  ] as const) {
    if (token !== undefined && token.length < MIN_FEED_TOKEN_LENGTH)
      throw new ConfigurationError(
        `feed({ ${name} }) must be at least ${MIN_FEED_TOKEN_LENGTH} characters (it guards candidate data); generate one with \`openssl rand -hex 24\``,
      );
  }
  if (options.token !== undefined && options.token === options.dashboardToken)
    throw new ConfigurationError('feed({ token }) and feed({ dashboardToken }) must differ: each token opens its own part');
  const stall = options.stallTimeoutMs;
  if (stall !== undefined && !(Number.isFinite(stall) && stall > 0))
    throw new ConfigurationError(`feed({ stallTimeoutMs }) must be a number of milliseconds above 0, got ${String(stall)}`);
}

export function mountedFeeds(context: {
  source: FeedSource;
  logger: Logger;
  /** The registry the accounts' feed tokens are read from, once the store is open. */
  registry: () => Promise<Pick<AccountsRegistry, 'version' | 'snapshot'>>;
}): MountedFeeds {
  const { source, logger } = context;
  const open = new Set<FeedStreams>();
  let accountFeeds: readonly AccountFeedToken[] = [];
  let closing = false;
  let stop: (() => void) | undefined;
  let firstReading: Promise<void> | undefined;
  // Started by the first mount; each request waits for the first reading, as serve's start does.
  const following = () =>
    (firstReading ??= (async () => {
      const registry = await context.registry();
      if (closing) return;
      stop = await followFeedTokens(registry, logger, (tokens) => void (accountFeeds = tokens));
      if (closing) stop();
    })().catch((error: unknown) =>
      logger.error(
        { err: { message: (error as Error).message } },
        "cannot read the accounts' feed tokens: the feed opens to its own tokens only",
      ),
    ));
  return {
    router(options) {
      checkedOptions(options);
      const own = accessTokens({ feedToken: options.token, dashboardToken: options.dashboardToken });
      const streams = feedStreams(logger, options.stallTimeoutMs);
      open.add(streams);
      void following();
      const router = Router();
      router.get('/changes', (req, res, next) => {
        void following().then(() => {
          const tokens = { ...own, accountFeeds };
          if (!servesFeed(tokens)) return next();
          answerFeed({ source, tokens, streams, closing }, req, res);
        });
      });
      return router;
    },
    close() {
      closing = true;
      stop?.();
      for (const streams of open) endFeedStreams(streams);
    },
  };
}
