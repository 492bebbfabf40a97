// Accounts (docs/accounts.md): one receiver may serve several agency accounts of the service, each
// with its own webhook path, secrets and projected state. Every delivery names its account.

const ROUTED_PATH = /\/webhooks\/([A-Za-z0-9_-]{1,128})\/?$/;

/**
 * The route key in a request path that ends `/webhooks/<route key>` (a query string ignored), or
 * undefined: any other path is the default account's, as before accounts existed.
 */
export function routeKeyOfPath(url: string | undefined): string | undefined {
  const path = (url ?? '/').split('?')[0]!;
  return ROUTED_PATH.exec(path)?.[1];
}

/** The account of `/webhooks`, of `createReceiver({ secrets })`, and of a database made before accounts existed. */
export const DEFAULT_ACCOUNT = 'default';

const ACCOUNT_ID = /^[a-z0-9](?:[a-z0-9_-]{0,62})$/;

/** Whether `value` is an account id: a slug of lowercase letters, digits, `-` and `_`, 1 to 63 characters, starting with a letter or digit. */
export function isAccountId(value: string): boolean {
  return ACCOUNT_ID.test(value);
}

/** What the intake knows of an account it routes to: whether it takes deliveries, and the secrets that verify them. */
export interface RoutedAccount {
  /** The account id. */
  readonly account: string;
  /** A disabled account's deliveries are refused (403) before their body is read. */
  readonly state: 'active' | 'disabled';
  /** The secrets that verify its deliveries (more than one during a rotation's overlap). Never empty for an active account. */
  readonly secrets: readonly (string | Uint8Array)[];
}

/** The accounts the intake routes to by the key in their webhook path (`/webhooks/<route key>`); swapped whole on a change. */
export interface AccountRoutes {
  /** The account whose webhook path has this key, or undefined (an unknown path: 404). */
  route(routeKey: string): RoutedAccount | undefined;
}
