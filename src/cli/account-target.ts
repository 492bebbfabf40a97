// The account a command names with --account, checked against the registry of its database
// before anything is read or written; and what `send --account` and `secret --account` read of
// another account: its route key and its live secrets (current first), opened with the accounts key.
import { existsSync } from 'node:fs';
import { openAccounts, type Accounts, type AccountSummary } from '../accounts/index.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import type { StoreHandle } from '../store/handle.js';
import { isPostgresUrl } from '../store/open.js';
import { CommandError, type CommandIo } from './args.js';
import { displayLocation, openForReading } from './database.js';

export interface AccountTarget {
  routeKey: string;
  /** Its secrets that verify now, the current one first. */
  secrets: readonly string[];
}

/**
 * The registry of a command's database, with the accounts key it names (or, on SQLite, the one
 * beside the file); its notices (a key generated, a key file others can read) go to stderr.
 */
export function commandAccounts(
  store: StoreHandle,
  location: string,
  keyFile: string | undefined,
  io: CommandIo,
  command: string,
): Accounts {
  return openAccounts(store, {
    ...(keyFile !== undefined && { keyFile }),
    ...(!isPostgresUrl(location) && { databaseFile: location }),
    onNotice: (message) => io.stderr.write(`prequal-hooks ${command}: ${message}\n`),
  });
}

/** The error of an account the registry does not hold: the same words for every command. */
function unknownAccount(location: string, account: string): CommandError {
  return new CommandError(`${displayLocation(location)} has no account "${account}" ("prequal-hooks accounts list" shows them)`);
}

/** The registry's summary of the account, or the CommandError that names the database and how to list its accounts. */
async function registeredAccount(store: StoreHandle, location: string, account: string): Promise<AccountSummary> {
  // The list is read without the accounts key: no secret is opened.
  const found = (await openAccounts(store).list()).find((a) => a.account === account);
  if (found === undefined) throw unknownAccount(location, account);
  return found;
}

/**
 * The view of the store for the account a command names (`--account`), once the registry holds
 * it: an unknown id is refused before the command reads or writes anything, rather than reading
 * as empty or storing rows under an account no command can reach. `default` is always there.
 * It reads the registry through the handle and scopes with `forAccount`; the view it returns has
 * the ports of `opened`'s views, whatever the command uses of them.
 */
export async function accountStore<View extends StoreHandle>(
  opened: Omit<StoreHandle, 'forAccount'> & { forAccount(account: string): View },
  location: string,
  account: string,
): Promise<View> {
  if (account !== DEFAULT_ACCOUNT) await registeredAccount(opened, location, account);
  return opened.forAccount(account);
}

/**
 * For the commands that create a missing SQLite database (replay, reconcile): a registry that does
 * not exist yet holds no account but the default one, so that the database is not created for a typo.
 */
export function refuseAccountOfNoDatabase(location: string, account: string): void {
  if (account !== DEFAULT_ACCOUNT && !isPostgresUrl(location) && !existsSync(location)) throw unknownAccount(location, account);
}

export async function readAccountTarget(
  where: { location: string; postgres: { schema?: string } },
  options: { account: string; keyFile: string | undefined; command: string },
  io: CommandIo,
): Promise<AccountTarget> {
  const { location, postgres } = where;
  const store = await openForReading(location, postgres);
  try {
    const accounts = commandAccounts(store, location, options.keyFile, io, options.command);
    const found = await registeredAccount(store, location, options.account);
    const routeKey = found.webhookPath.split('/').at(-1)!;
    const secrets = ((await accounts.routes()).route(routeKey)?.secrets ?? []).filter((s): s is string => typeof s === 'string');
    return { routeKey, secrets };
  } finally {
    await store.close();
  }
}
