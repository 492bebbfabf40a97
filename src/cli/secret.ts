import { secretFingerprint } from '../signature.js';
import { GENERATED_SECRET } from '../store/settings.js';
import { CommandError, UsageError, type CommandIo } from './args.js';
import { databaseOf, databaseOptions, flag, flagsOnly, optional, optionsHelp, type ParsedCommand } from './options.js';
import { defineCommand } from './command.js';
import { ACCOUNTS_KEY_OPTIONS } from './accounts-options.js';
import { DEFAULT_ACCOUNT } from '../receive/account.js';
import { readAccountTarget } from './account-target.js';
import { displayLocation, openForReading } from './database.js';

export const SECRET_OPTIONS = {
  ...databaseOptions('must exist'),
  ...flagsOnly({
    account: optional({
      placeholder: '<id>',
      help: 'another account of the registry: print the fingerprints of its secrets (current first), never the secrets, which accounts add showed once',
    }),
  }),
  ...ACCOUNTS_KEY_OPTIONS,
  ...flagsOnly({
    fingerprint: flag({
      help: 'print the fingerprint of each secret read on standard input, one a line, instead (no database is read)',
    }),
  }),
};

export const SECRET_HELP = `Usage: prequal-hooks secret [--db <path|url>] [--schema <name>]
       prequal-hooks secret --fingerprint < secrets.txt

Prints the webhook secret that "prequal-hooks serve" generated and stored in the database
when it was started without one, to paste in the agency dashboard (API section, Webhooks tab).

With --fingerprint, prints instead the fingerprint of each secret read on standard input (one
secret a line, as in a --secret-file: surrounding blanks trimmed, blank lines skipped), one a
line in the same order: the first 12 hex digits of its SHA-256, as serve logs them and as the
metrics and the console show them, to tell which secret of a rotation is still in use.

${optionsHelp(SECRET_OPTIONS)}`;

export const secret = defineCommand({
  options: SECRET_OPTIONS,
  help: SECRET_HELP,
  async run(command, io) {
    if (command.values.fingerprint) {
      for (const name of ['db', 'schema'] as const) {
        if (command.sources[name].from === 'flag')
          throw new UsageError(`--fingerprint reads secrets from standard input, not from a database: drop --${name}`);
      }
      return await printFingerprints(io);
    }
    const { location: path, postgres } = databaseOf(command);
    const { account } = command.values;
    if (account !== undefined && account !== DEFAULT_ACCOUNT) return await printAccountFingerprints(command, account, io);
    const store = await openForReading(path, postgres);
    let stored: string | undefined;
    try {
      stored = (await store.setting(GENERATED_SECRET))?.value;
    } finally {
      await store.close();
    }
    if (stored === undefined) {
      throw new CommandError(
        `${displayLocation(path)} holds no generated secret: "prequal-hooks serve" generates one only when started without --secret, PREQUAL_HOOKS_SECRET or --allow-unsigned`,
      );
    }
    io.stdout.write(`${stored}\n`);
    return 0;
  },
});

/** The fingerprints of an account's live secrets, current first: which one signs is told, the secret never. */
async function printAccountFingerprints(command: ParsedCommand<typeof SECRET_OPTIONS>, account: string, io: CommandIo): Promise<number> {
  const target = await readAccountTarget(
    databaseOf(command),
    { account, keyFile: command.values['accounts-key-file'], command: 'secret' },
    io,
  );
  for (const s of target.secrets) io.stdout.write(`${secretFingerprint(s)}\n`);
  io.stderr.write(`The secrets of account "${account}" are not shown: "prequal-hooks accounts rotate-secret" sets a new one.\n`);
  return 0;
}

/** One fingerprint a secret, in input order; the secrets themselves are never written anywhere. */
async function printFingerprints(io: CommandIo): Promise<number> {
  const stdin = io.stdin ?? process.stdin;
  if (stdin.isTTY === true) io.stderr.write('prequal-hooks secret: reading secrets from standard input, one a line; end with Ctrl-D.\n');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin as AsyncIterable<string | Buffer>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // The rules of a secret file: a line end or surrounding blanks are no part of a secret.
  const secrets = Buffer.concat(chunks)
    .toString('utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (secrets.length === 0)
    throw new CommandError('no secret on standard input: give one a line, e.g. prequal-hooks secret --fingerprint < secrets.txt');
  io.stdout.write(secrets.map((one) => `${secretFingerprint(one)}\n`).join(''));
  return 0;
}
