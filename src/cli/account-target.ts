// What `send --account` and `secret --account` read of another account: its route key and its
// live secrets (current first), from the registry of --db opened with the accounts key.
import { openAccounts } from '../accounts/index.js';
import { isPostgresUrl } from '../store/open.js';
import { CommandError, type CommandIo } from './args.js';
import { displayLocation, openForReading } from './database.js';

export interface AccountTarget {
  routeKey: string;
  /** Its secrets that verify now, the current one first. */
  secrets: readonly string[];
}

export async function readAccountTarget(
  where: { location: string; postgres: { schema?: string } },
  options: { account: string; keyFile: string | undefined; command: string },
  io: CommandIo,
): Promise<AccountTarget> {
  const { location, postgres } = where;
  const store = await openForReading(location, postgres);
  try {
    const accounts = openAccounts(store, {
      ...(options.keyFile !== undefined && { keyFile: options.keyFile }),
      ...(!isPostgresUrl(location) && { databaseFile: location }),
      onNotice: (message) => io.stderr.write(`prequal-hooks ${options.command}: ${message}\n`),
    });
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
