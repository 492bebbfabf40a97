// The accounts' own feed tokens (`accounts set-feed-token`, docs/changes.md), followed from the
// registry for the feed's checks: `serve`'s routes and a mounted `receiver.feed()` alike.
import { watchFeedTokens, type FeedTokens } from '../accounts/feed-tokens.js';
import type { Logger } from '../logging.js';
import type { AccountsRegistry } from '../store/accounts-registry.js';
import type { AccountFeedToken } from './access.js';

/**
 * Reads the tokens now (resolving once read, or once the reading failed) and again whenever the
 * registry's change stamp moves (each second); a registry that cannot be read keeps the tokens
 * last read, with a line a kind of failure. `onChange` gets each new set; returns what stops it.
 */
export async function followFeedTokens(
  registry: Pick<AccountsRegistry, 'version' | 'snapshot'>,
  logger: Logger,
  onChange: (tokens: readonly AccountFeedToken[]) => void,
): Promise<() => void> {
  let lastFailure: string | undefined;
  let held: FeedTokens['tokens'] = [];
  return await watchFeedTokens(registry, {
    onChange(feeds) {
      lastFailure = undefined;
      const ids = (tokens: FeedTokens['tokens']) => tokens.map((t) => `${t.account}:${t.digest.toString('hex')}`).join();
      if (ids(feeds.tokens) !== ids(held))
        logger.info(
          { accounts: feeds.tokens.map((t) => t.account).slice(0, 20) },
          `account feed tokens: ${feeds.tokens.length} ${feeds.tokens.length === 1 ? 'account has one' : 'accounts have one'}`,
        );
      held = feeds.tokens;
      onChange(feeds.tokens);
    },
    onError(error) {
      const failure = (error as Error).message;
      if (failure === lastFailure) return;
      lastFailure = failure;
      logger.error({ err: { message: failure } }, "cannot read the accounts' feed tokens; the ones last read stay in use");
    },
  });
}
