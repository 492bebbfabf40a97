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
  let lastFailure: string | undefined;
  let loaded = false;
  const stop = watchAccounts(accounts, {
    everyMs: settings?.everyMs ?? 1000,
    onChange: (routes) => {
      loaded = true;
      lastFailure = undefined;
      setRoutes(routes);
      void accounts.list().then(
        (list) => (known = list.map((a) => a.account)),
        () => undefined,
      );
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
  return { accounts, known: () => known, stop };
}
