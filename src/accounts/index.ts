// The accounts registry (docs/accounts.md), as the package exports it.
export {
  openAccounts,
  type Accounts,
  type AccountsOptions,
  type AccountSummary,
  type AddAccount,
  type AddedAccount,
  type RotatedSecret,
  type RemovedAccount,
  type Rekeyed,
} from './registry.js';
export { watchAccounts, type AccountRoutesSnapshot, type WatchOptions, type RoutesSource } from './routes.js';
export { AccountsKeyError, AccountRequestError, UnknownAccountError } from './errors.js';
