// The accounts a receiver routes to besides the default one (docs/accounts.md): the registry read
// at start and polled while it runs, so that an account added, disabled or rotated by the CLI or
// another replica takes effect within two seconds, without a restart.
import { openAccounts, watchAccounts, type Accounts } from '../accounts/index.js';
import type { Logger } from '../logging.js';
import { DEFAULT_ACCOUNT, type AccountRoutes } from '../receive/account.js';
import { isPostgresUrl } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { ReceiverOptions } from './options.js';

/** What the intake is given: the routes, or 'unavailable' while they cannot be read (routed requests get 503). */
export type RoutesUpdate = AccountRoutes | 'unavailable';

export interface AccountsWatch {
  readonly accounts: Accounts;
  /** Every account routed to, the default one first (for per-account gauges). */
  known(): readonly string[];
  /** Whether the registry held the account at its last reading; undefined before the first. */
  holds(account: string): boolean | undefined;
  stop(): void;
}

/** The SQLite file a receiver was given by path, beside which the accounts key is kept by default. */
function databaseFileOf(options: ReceiverOptions): string | undefined {
  const { database } = options;
  return typeof database === 'string' && database !== ':memory:' && !isPostgresUrl(database) ? database : undefined;
}

/**
 * Reads the registry now and every `everyMs` (default 1000) after, handing each new set of routes
 * to `setRoutes`. A registry that cannot be read (a missing or wrong accounts key, the database
 * down) is logged once per kind of failure, and routed requests get 503 until it can: the sender
 * retries, and nothing addressed to an account is refused for a fault of ours.
 */
export function watchRegistry(
  options: ReceiverOptions,
  store: Store,
  logger: Logger,
  setRoutes: (routes: RoutesUpdate) => void,
): AccountsWatch | undefined {
  const settings = options.accounts;
  if (settings === false) return undefined;
  const databaseFile = settings?.databaseFile ?? databaseFileOf(options);
  const accounts = openAccounts(store, {
    ...(settings?.keyFile !== undefined && { keyFile: settings.keyFile }),
    ...(databaseFile !== undefined && { databaseFile }),
    onNotice: (message) => logger.warn(message),
  });
  let known: readonly string[] = [DEFAULT_ACCOUNT];
  let held = new Set(known);
  // Added through this receiver since the routes last said: known at once, not at the next poll.
  const addedHere = new Set<string>();
  let lastFailure: string | undefined;
  let loaded = false;
  const stop = watchAccounts(accounts, {
    everyMs: settings?.everyMs ?? 1000,
    onChange: (routes) => {
      loaded = true;
      lastFailure = undefined;
      setRoutes(routes);
      known = [DEFAULT_ACCOUNT, ...routes.accounts.map((a) => a.account)];
      held = new Set(known);
      for (const account of addedHere) if (held.has(account)) addedHere.delete(account);
    },
    onError: (error) => {
      const failure = `${(error as Error).name}: ${(error as Error).message}`;
      if (failure !== lastFailure) {
        logger.error(
          { err: { name: (error as Error).name, message: (error as Error).message } },
          'cannot read the accounts; their webhooks get 503 until it can',
        );
        lastFailure = failure;
      }
      if (!loaded) setRoutes('unavailable');
    },
  });
  const tracked: Accounts = {
    ...accounts,
    add: async (request) => {
      const added = await accounts.add(request);
      addedHere.add(added.account);
      return added;
    },
    remove: async (account, removal) => {
      const removed = await accounts.remove(account, removal);
      addedHere.delete(account);
      held.delete(account);
      return removed;
    },
  };
  return {
    accounts: tracked,
    known: () => known,
    holds: (account) => (held.has(account) || addedHere.has(account) ? true : loaded ? false : undefined),
    stop,
  };
}
