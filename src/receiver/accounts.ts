// The accounts a receiver routes to besides the default one (docs/accounts.md): the registry read
// at start and polled while it runs, so that an account added, disabled or rotated by the CLI or
// another replica takes effect within two seconds, without a restart.
import { openAccounts, watchAccounts, type Accounts } from '../accounts/index.js';
import type { Logger } from '../logging.js';
import { DEFAULT_ACCOUNT, type AccountRoutes, type RoutedAccount } from '../receive/account.js';
import { isPostgresUrl } from '../store/open.js';
import type { StoreHandle } from '../store/handle.js';
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

/** At most this many ids of each change are logged (with the counts of all): a bulk change stays one short line. */
const IDS_LOGGED = 20;

/**
 * What changed between two readings of the registry, by account id: never a secret or a route key.
 * A secret is rotated when one appears; a previous secret ended when one only went (its overlap over).
 */
function registryChanges(before: readonly RoutedAccount[], after: readonly RoutedAccount[]) {
  const old = new Map(before.map((a) => [a.account, a]));
  const now = new Map(after.map((a) => [a.account, a]));
  const changes = {
    added: [...now.keys()].filter((id) => !old.has(id)),
    removed: [...old.keys()].filter((id) => !now.has(id)),
    disabled: [] as string[],
    enabled: [] as string[],
    secretRotated: [] as string[],
    previousSecretEnded: [] as string[],
  };
  for (const [id, account] of now) {
    const was = old.get(id);
    if (was === undefined) continue;
    if (was.state !== account.state) (account.state === 'disabled' ? changes.disabled : changes.enabled).push(id);
    const held = new Set(was.secrets.map(String));
    const holds = new Set(account.secrets.map(String));
    if ([...holds].some((s) => !held.has(s))) changes.secretRotated.push(id);
    else if ([...held].some((s) => !holds.has(s))) changes.previousSecretEnded.push(id);
  }
  return changes;
}

/** One info line for a change of the registry: counts and (a few) ids of each kind of change, and how many accounts are served. */
function logChanges(logger: Logger, before: readonly RoutedAccount[], after: readonly RoutedAccount[]): void {
  const changes = registryChanges(before, after);
  const parts = Object.entries(changes)
    .filter(([, ids]) => ids.length > 0)
    .map(
      ([kind, ids]) =>
        `${ids.length} ${kind.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)} (${ids.slice(0, IDS_LOGGED).join(', ')}${ids.length > IDS_LOGGED ? ', …' : ''})`,
    );
  if (parts.length === 0) return;
  const active = after.filter((a) => a.state === 'active').length;
  logger.info(
    {
      accounts: { active: active + 1, disabled: after.length - active },
      ...Object.fromEntries(Object.entries(changes).map(([kind, ids]) => [kind, ids.slice(0, IDS_LOGGED)])),
    },
    `accounts changed: ${parts.join('; ')}; serving ${active + 1} accounts`,
  );
}

/** The SQLite file a receiver was given by path, beside which the accounts key is kept by default. */
export function databaseFileOf(options: ReceiverOptions): string | undefined {
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
  store: StoreHandle,
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
  let routed: readonly RoutedAccount[] = [];
  const stop = watchAccounts(accounts, {
    everyMs: settings?.everyMs ?? 1000,
    onChange: (routes) => {
      // The first reading is the start, not a change: serve's start line says how many it serves.
      if (loaded) logChanges(logger, routed, routes.accounts);
      routed = routes.accounts;
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
