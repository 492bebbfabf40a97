// What the intake routes by (src/receive/account.ts): a snapshot of the registry, its secrets
// opened, taken whole; and a poller that takes a new one when the registry's change stamp moves
// or a rotation's overlap ends.
import type { AccountRoutes, RoutedAccount } from '../receive/account.js';
import type { RegistrySnapshot } from '../store/accounts-registry.js';
import { open, type AccountsKey } from './cipher.js';
import { AccountsKeyError } from './errors.js';

/** Routes as of one version of the registry, and when they change by themselves (a previous secret expiring). */
export interface AccountRoutesSnapshot extends AccountRoutes {
  /** The registry's change stamp these routes were read at. */
  readonly version: number;
  /** The instant (ms) the next previous secret stops verifying, when one does. */
  readonly refreshAt: number | undefined;
  /** How many accounts it routes to. */
  readonly size: number;
  /** Every account it routes to (disabled ones too), in the registry's order. */
  readonly accounts: readonly RoutedAccount[];
}

/** The routes of a snapshot at `now`: expired secrets left out. */
export function routesOf(snapshot: RegistrySnapshot, keyOf: (keyId: string) => AccountsKey, now: number): AccountRoutesSnapshot {
  const byKey = new Map<string, RoutedAccount>();
  let refreshAt: number | undefined;
  for (const row of snapshot.accounts) {
    const secrets: string[] = [];
    // Newest first: the current secret is tried before the previous one.
    for (const s of snapshot.secrets.filter((x) => x.account === row.account).reverse()) {
      const expires = s.expires_at === null ? undefined : Date.parse(s.expires_at);
      if (expires !== undefined && expires <= now) continue;
      if (expires !== undefined) refreshAt = Math.min(refreshAt ?? expires, expires);
      const secret = open(keyOf(s.key_id), row.account, 'secret', s.ciphertext);
      if (secret === undefined)
        throw new AccountsKeyError(
          `a secret of account "${row.account}" does not decrypt with the accounts key ${s.key_id}: the row was altered`,
        );
      secrets.push(secret);
    }
    byKey.set(row.route_key, { account: row.account, state: row.state, secrets });
  }
  return {
    version: snapshot.version,
    refreshAt,
    size: byKey.size,
    accounts: [...byKey.values()],
    route: (routeKey) => byKey.get(routeKey),
  };
}

/** How `watchAccounts` polls. */
export interface WatchOptions {
  /** How often the change stamp is read (ms). Default 1000: every replica sees a change within 2 s. */
  everyMs?: number;
  /** Called with the new routes after a change (not for the routes `current` gave). */
  onChange(routes: AccountRoutesSnapshot): void;
  /** Called when a poll fails; the last routes stay and the next poll retries. */
  onError?(error: unknown): void;
  /** The routes the caller holds already; without them the first poll reports routes. */
  current?: AccountRoutesSnapshot;
  /** The clock (ms), as the registry's. */
  now?: () => number;
}

/** What the poller reads: the registry's change stamp and routes (`openAccounts` gives both). */
export interface RoutesSource {
  /** The registry's change stamp: it moves on every change. */
  version(): Promise<number>;
  /** The routes as of now. */
  routes(): Promise<AccountRoutesSnapshot>;
}

/** Polls the registry's change stamp and reports new routes; returns the function that stops it. */
export function watchAccounts(accounts: RoutesSource, options: WatchOptions): () => void {
  const now = options.now ?? Date.now;
  return pollRegistry({ version: () => accounts.version(), read: () => accounts.routes() }, options, (routes) =>
    routes.refreshAt === undefined ? false : now() >= routes.refreshAt,
  );
}

/** What a poller of the registry reads: its change stamp, and what it makes of the registry as of one. */
interface VersionedSource<T extends { readonly version: number }> {
  version(): Promise<number>;
  read(): Promise<T>;
}

/**
 * Reads `source` now (unless `options.current` is given) and again whenever the registry's change
 * stamp moves or `expired` says what was read is out of date, every `everyMs` (default 1000);
 * returns the function that stops it. A failed poll keeps what was read, and the next retries.
 */
export function pollRegistry<T extends { readonly version: number }>(
  source: VersionedSource<T>,
  options: Pick<WatchOptions, 'everyMs'> & { onChange(read: T): void; onError?(error: unknown): void; current?: T },
  expired: (read: T) => boolean = () => false,
): () => void {
  const everyMs = options.everyMs ?? 1000;
  let current = options.current;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async () => {
    try {
      const version = await source.version();
      const due = current === undefined || version !== current.version || expired(current);
      if (!due || stopped) return;
      const read = await source.read();
      if (stopped) return;
      current = read;
      options.onChange(read);
    } catch (error) {
      options.onError?.(error);
    }
  };
  const schedule = (delayMs: number) => {
    if (stopped) return;
    // A failed poll waits its turn like any other: never a tight loop while the database is down.
    timer = setTimeout(() => void poll().finally(() => schedule(everyMs)), delayMs);
    timer.unref();
  };
  schedule(current === undefined ? 0 : everyMs);
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
