// Accounts (docs/accounts.md): one receiver may serve several agency accounts of the service, each
// with its own webhook path, secrets and projected state. Every delivery names its account.

/** The account of `/webhooks`, of `createReceiver({ secrets })`, and of a database made before accounts existed. */
export const DEFAULT_ACCOUNT = 'default';

const ACCOUNT_ID = /^[a-z0-9](?:[a-z0-9_-]{0,62})$/;

/** Whether `value` is an account id: a slug of lowercase letters, digits, `-` and `_`, 1 to 63 characters, starting with a letter or digit. */
export function isAccountId(value: string): boolean {
  return ACCOUNT_ID.test(value);
}
