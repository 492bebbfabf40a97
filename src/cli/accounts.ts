// `prequal-hooks accounts`: the registry of the agency accounts one receiver serves (docs/accounts.md),
// one subcommand a verb. Secrets are printed once, by `add` when it generated one; never by `list`.
import { readFileSync } from 'node:fs';
import { AccountRequestError, UnknownAccountError, type Accounts, type AccountSummary } from '../accounts/index.js';
import { MIN_FEED_TOKEN_LENGTH } from '../accounts/feed-tokens.js';
import { parseKey } from '../accounts/key-file.js';
import { DEFAULT_ACCOUNT, isAccountId } from '../receive/account.js';
import { openStore } from '../store/open.js';
import { CommandError, readFailure, UsageError, type CommandIo } from './args.js';
import {
  ADD_OPTIONS,
  API_KEY_OPTIONS,
  FEED_TOKEN_OPTIONS,
  LIST_OPTIONS,
  REKEY_OPTIONS,
  REMOVE_OPTIONS,
  ROTATE_OPTIONS,
  STATE_OPTIONS,
} from './accounts-options.js';
import { commandAccounts } from './account-target.js';
import { openForReading, requireDatabaseFile } from './database.js';
import { databaseOf, type OptionTable, type ParsedCommand } from './options.js';
import { defineVerb, defineVerbs, type Command } from './command.js';
import { outputFormat, printJson, renderTable, shortInstant, type Column } from './output.js';
import { WEAK_SECRET_LENGTH } from './serve-options.js';

export const ACCOUNTS_HELP = `Usage: prequal-hooks accounts add --db <db> --account <id> [--name <text>] [--secret <s> | --secret-file <f>] [--api-key-file <f>] [--json]
       prequal-hooks accounts list --db <db> [--json | --table]
       prequal-hooks accounts disable|enable --db <db> --account <id>
       prequal-hooks accounts remove --db <db> --account <id> --erase-data --reason <text>
       prequal-hooks accounts rotate-secret --db <db> --account <id> [--secret <s> | --secret-file <f>] [--keep-previous 24h]
       prequal-hooks accounts set-api-key --db <db> --account <id> (--api-key-file <f> | --clear)
       prequal-hooks accounts set-feed-token --db <db> --account <id> (--token-file <f> | --clear)
       prequal-hooks accounts rekey --db <db> [--accounts-key-file <f>] [--new-key-file <f>]

The agency accounts one receiver serves besides the default one (docs/accounts.md). Each account
has its webhook path, /webhooks/<random key>, to paste in its agency dashboard with its secret;
the default account stays at /webhooks with the secret of serve --secret. A running receiver
sees every change within 2 seconds.

Secrets and API keys are stored encrypted (AES-256-GCM) under the accounts key, a file kept apart
from the database (--accounts-key-file): on SQLite, <db>.accounts-key is made at first need
(back it up apart from the database); on PostgreSQL give it, the same file on every replica.

add            registers an account; without --secret, generates one and prints it, once
list           every account, its path and state; never a secret or a key
disable/enable a disabled account's deliveries are refused; enable takes them again
remove         erases every row of the account, then the account and its secrets (--erase-data
               and --reason required; the removal is kept in account_removals, without a secret)
rotate-secret  the new secret verifies at once, the previous one for --keep-previous more;
               without --secret, generates one and prints it, once
set-api-key    sets (or with --clear forgets) the account's API key, for reconciliation
set-feed-token sets (or with --clear removes) the token that opens the account's change feed,
               GET /changes?account=<id> of serve, and nothing else; stored as its SHA-256
rekey          re-encrypts every secret, key and destination under a new key; the key file holds it and
               each replaced key is kept as <key file>.<its key id> (for backups made before)

Run "prequal-hooks accounts <verb> --help" for a verb's options. Exits 1 when the account is
unknown or the key is wrong, 2 when the command is called wrongly.`;

const verb = <O extends OptionTable>(name: string, table: O, run: (command: ParsedCommand<O>, io: CommandIo) => Promise<number>) =>
  defineVerb('accounts', name, table, run);

const VERBS: Record<string, Command> = {
  add: verb('add', ADD_OPTIONS, add),
  list: verb('list', LIST_OPTIONS, list),
  disable: verb('disable', STATE_OPTIONS, (command, io) => setState(command, io, 'disabled')),
  enable: verb('enable', STATE_OPTIONS, (command, io) => setState(command, io, 'active')),
  remove: verb('remove', REMOVE_OPTIONS, remove),
  'rotate-secret': verb('rotate-secret', ROTATE_OPTIONS, rotateSecret),
  'set-api-key': verb('set-api-key', API_KEY_OPTIONS, setApiKey),
  'set-feed-token': verb('set-feed-token', FEED_TOKEN_OPTIONS, setFeedToken),
  rekey: verb('rekey', REKEY_OPTIONS, rekey),
};

/** The verbs of `accounts`, each with its own --help (docs/cli.md prints them). */
export const ACCOUNT_VERBS: readonly string[] = Object.keys(VERBS);

const run = defineVerbs(ACCOUNTS_HELP, VERBS);

export async function accounts(argv: string[], io: CommandIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    if (error instanceof UnknownAccountError) throw new CommandError(error.message);
    if (error instanceof AccountRequestError) throw new CommandError(error.message);
    throw error;
  }
}

/** The account id given, checked: a usage error when absent, not a slug, or the default account. */
function accountOf(values: { account: string | undefined }): string {
  const account = values.account;
  if (account === undefined) throw new UsageError('--account is required: the id of the account');
  if (account === DEFAULT_ACCOUNT)
    throw new UsageError(
      `"${DEFAULT_ACCOUNT}" is the default account, served at /webhooks with serve --secret: the registry does not hold it`,
    );
  if (!isAccountId(account))
    throw new UsageError(
      `--account "${account}" is not an account id: use 1 to 63 lowercase letters, digits, "-" and "_", starting with a letter or digit`,
    );
  return account;
}

/** Opens the store and the registry, runs `work`, closes; notices (a key generated, a loose key file) go to stderr. */
async function withAccounts<T>(
  command: ParsedCommand<OptionTable>,
  io: CommandIo,
  options: { creates?: boolean; readOnly?: boolean },
  work: (accounts: Accounts) => Promise<T>,
): Promise<T> {
  const { location, postgres } = databaseOf(command as ParsedCommand<typeof LIST_OPTIONS>);
  if (options.creates !== true) requireDatabaseFile(location);
  const store = options.readOnly ? await openForReading(location, postgres) : await openStore(location, postgres);
  const keyFile = (command.values as { 'accounts-key-file'?: string | undefined })['accounts-key-file'];
  try {
    return await work(commandAccounts(store, location, keyFile, io, 'accounts'));
  } finally {
    await store.close();
  }
}

/** A secret given that is short enough to guess offline from one signed request; a generated one never is. */
function warnIfWeak(io: CommandIo, secret: string | undefined): void {
  if (secret !== undefined && Buffer.byteLength(secret) < WEAK_SECRET_LENGTH)
    io.stderr.write(
      `prequal-hooks accounts: the secret is shorter than ${WEAK_SECRET_LENGTH} bytes: it can be guessed offline from one signed request; ` +
        'give none to have a random one generated\n',
    );
}

async function add(command: ParsedCommand<typeof ADD_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const account = accountOf(values);
  warnIfWeak(io, values.secret);
  const added = await withAccounts(command, io, { creates: true }, (registry) =>
    registry.add({
      account,
      ...(values.name !== undefined && { name: values.name }),
      ...(values.secret !== undefined && { secret: values.secret }),
      ...(values['api-key'] !== undefined && { apiKey: values['api-key'] }),
    }),
  );
  if (values.json) printJson(io, added);
  else {
    io.stdout.write(`added account ${added.account}${added.name === null ? '' : ` (${added.name})`}: webhook path ${added.webhookPath}\n`);
    if (added.secret !== undefined)
      io.stdout.write(`its secret, shown once (paste it in the account's agency dashboard with the path): ${added.secret}\n`);
  }
  return 0;
}

const COLUMNS: Array<Column<AccountSummary>> = [
  { header: 'ACCOUNT', value: (a) => a.account },
  { header: 'NAME', value: (a) => a.name, max: 30 },
  { header: 'STATE', value: (a) => a.state },
  { header: 'WEBHOOK PATH', value: (a) => a.webhookPath },
  { header: 'SECRETS', value: (a) => a.secrets ?? 'serve --secret', align: 'right' },
  { header: 'PREVIOUS UNTIL (UTC)', value: (a) => (a.previousSecretUntil === null ? null : shortInstant(a.previousSecretUntil)) },
  { header: 'API KEY', value: (a) => (a.hasApiKey ? 'yes' : 'no') },
  { header: 'FEED TOKEN', value: (a) => (a.hasFeedToken ? 'yes' : 'no') },
  { header: 'CREATED (UTC)', value: (a) => (a.createdAt === null ? null : shortInstant(a.createdAt)) },
];

async function list(command: ParsedCommand<typeof LIST_OPTIONS>, io: CommandIo): Promise<number> {
  const listed = await withAccounts(command, io, { readOnly: true }, (registry) => registry.list());
  if (outputFormat(command.values, io) === 'json') printJson(io, { accounts: listed });
  else io.stdout.write(`${renderTable(listed, COLUMNS)}\n`);
  return 0;
}

async function setState(command: ParsedCommand<typeof STATE_OPTIONS>, io: CommandIo, state: 'active' | 'disabled'): Promise<number> {
  const account = accountOf(command.values);
  const summary = await withAccounts(command, io, {}, (registry) =>
    state === 'active' ? registry.enable(account) : registry.disable(account),
  );
  if (command.values.json) printJson(io, summary);
  else
    io.stdout.write(
      `account ${account} ${state === 'active' ? 'enabled: its deliveries are taken' : 'disabled: its deliveries are refused'}\n`,
    );
  return 0;
}

async function remove(command: ParsedCommand<typeof REMOVE_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const account = accountOf(values);
  if (!values['erase-data'])
    throw new UsageError(
      `removing an account erases every row of it: say so with --erase-data (disable keeps its data and stops its deliveries)`,
    );
  if (values.reason === undefined || values.reason.trim() === '')
    throw new UsageError('--reason is required: it is kept in the audit trail, account_removals (say why, without personal data)');
  const reason = values.reason;
  const removed = await withAccounts(command, io, {}, (registry) => registry.remove(account, { reason }));
  if (values.json) printJson(io, removed);
  else
    io.stdout.write(
      `removed account ${account}: ${removed.inboxRows} stored deliveries erased with its rows, recorded in account_removals\n`,
    );
  if (!removed.scrubbed)
    io.stderr.write('prequal-hooks accounts: a reader kept the WAL from being emptied; the erased bytes leave it at its next checkpoint\n');
  return 0;
}

async function rotateSecret(command: ParsedCommand<typeof ROTATE_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const account = accountOf(values);
  const secret = values.secret;
  warnIfWeak(io, secret);
  const rotated = await withAccounts(command, io, {}, (registry) =>
    registry.rotateSecret(account, { ...(secret !== undefined && { secret }), keepPreviousMs: values['keep-previous'] }),
  );
  if (values.json) printJson(io, rotated);
  else {
    io.stdout.write(
      `account ${account}: new secret ${rotated.fingerprint} in use; the previous one verifies until ${rotated.previousSecretUntil}\n`,
    );
    if (rotated.secret !== undefined)
      io.stdout.write(`its new secret, shown once (paste it in the account's agency dashboard): ${rotated.secret}\n`);
  }
  return 0;
}

async function setApiKey(command: ParsedCommand<typeof API_KEY_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const account = accountOf(values);
  const apiKey = values['api-key'];
  if ((apiKey === undefined) === !values.clear)
    throw new UsageError('give the key with --api-key-file (or --api-key), or --clear, one of them');
  const summary = await withAccounts(command, io, {}, (registry) => registry.setApiKey(account, values.clear ? null : apiKey!));
  if (values.json) printJson(io, summary);
  else io.stdout.write(`account ${account}: API key ${summary.hasApiKey ? 'set' : 'cleared'}\n`);
  return 0;
}

async function setFeedToken(command: ParsedCommand<typeof FEED_TOKEN_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const account = accountOf(values);
  const token = values.token;
  if ((token === undefined) === !values.clear)
    throw new UsageError('give the token with --token-file (or --token), or --clear, one of them');
  const source = command.sources.token;
  if (token !== undefined && token.length < MIN_FEED_TOKEN_LENGTH)
    throw new UsageError(
      `${source.from === 'default' ? '--token' : source.name} must be at least ${MIN_FEED_TOKEN_LENGTH} characters (it guards candidate data); generate one with \`openssl rand -hex 24\``,
    );
  const summary = await withAccounts(command, io, {}, (registry) => registry.setFeedToken(account, values.clear ? null : token!));
  if (values.json) printJson(io, summary);
  else
    io.stdout.write(
      summary.hasFeedToken
        ? `account ${account}: feed token set; it opens GET /changes?account=${account} alone (a running serve takes it within 2 seconds)\n`
        : `account ${account}: feed token removed\n`,
    );
  return 0;
}

async function rekey(command: ParsedCommand<typeof REKEY_OPTIONS>, io: CommandIo): Promise<number> {
  const { values } = command;
  const newKey = values['new-key-file'] === undefined ? undefined : readNewKey(values['new-key-file']);
  const rekeyed = await withAccounts(command, io, {}, (registry) => registry.rekey(newKey === undefined ? {} : { newKey }));
  if (values.json) printJson(io, rekeyed);
  else
    io.stdout.write(
      `re-encrypted ${rekeyed.values} values under the accounts key ${rekeyed.keyId}, now in ${rekeyed.keyFile}` +
        (rekeyed.previousKeyFile === null
          ? '\n'
          : `; the previous key ${rekeyed.previousKeyId} is kept in ${rekeyed.previousKeyFile} (each replaced key keeps a file ` +
            `named by its id): a backup made before now needs it, so keep it as long as those backups, then delete it\n`),
    );
  return 0;
}

/** The 32 bytes of a new key file, as the key file holds them (base64 or hex). */
function readNewKey(path: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new CommandError(`cannot read ${path} (given by --new-key-file): ${readFailure(error)}`);
  }
  return parseKey(text, `${path} (given by --new-key-file)`).key;
}
