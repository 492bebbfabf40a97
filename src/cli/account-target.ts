// What `send --account` and `secret --account` read of another account: its route key and its
// live secrets (current first), from the registry of --db opened with the accounts key.
import { openAccounts, type Accounts } from '../accounts/index.js';
import type { Store } from '../store/store.js';
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
export function commandAccounts(store: Store, location: string, keyFile: string | undefined, io: CommandIo, command: string): Accounts {
  return openAccounts(store, {
    ...(keyFile !== undefined && { keyFile }),
    ...(!isPostgresUrl(location) && { databaseFile: location }),
    onNotice: (message) => io.stderr.write(`prequal-hooks ${command}: ${message}\n`),
  });
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
    const found = (await accounts.list()).find((a) => a.account === options.account);
    if (found === undefined)
      throw new CommandError(`${displayLocation(location)} has no account "${options.account}" ("prequal-hooks accounts list" shows them)`);
    const routeKey = found.webhookPath.split('/').at(-1)!;
    const secrets = ((await accounts.routes()).route(routeKey)?.secrets ?? []).filter((s): s is string => typeof s === 'string');
    return { routeKey, secrets };
  } finally {
    await store.close();
  }
}
