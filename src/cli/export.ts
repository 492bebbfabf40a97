import { exportCandidate } from '../privacy/index.js';
import { UsageError, type CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { openForReading } from './database.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flagsOnly, optional, optionsHelp, parseCommand } from './options.js';
import { printJson } from './output.js';

export const EXPORT_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    candidate: optional({ placeholder: '<id>', help: 'the candidate_id whose data to export (required)' }),
  }),
};

export const EXPORT_HELP = `Usage: prequal-hooks export --db <db> --candidate <id>

Prints everything held about one candidate (GDPR article 15) as one JSON document on stdout:
the projected row, the interview responses, every stored event naming them with its state and
times, and the erasure record if they were erased. Read-only: safe beside a running receiver.

${optionsHelp(EXPORT_OPTIONS)}`;

export async function exportCommand(argv: string[], io: CommandIo): Promise<number> {
  const command = parseCommand(EXPORT_OPTIONS, argv, io.env);
  if (command.help) {
    io.stdout.write(`${EXPORT_HELP}\n`);
    return 0;
  }
  const candidate = command.values.candidate;
  if (candidate === undefined || candidate === '') throw new UsageError('--candidate <id> is required');
  const { location, postgres } = databaseOf(command);
  const opened = await openForReading(location, postgres);
  try {
    const store = await accountStore(opened, location, command.values.account);
    printJson(io, await exportCandidate(store, candidate));
  } finally {
    await opened.close();
  }
  return 0;
}
