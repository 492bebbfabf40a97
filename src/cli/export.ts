import { exportCandidate, exportPerson, UnknownCandidateError } from '../privacy/index.js';
import { CommandError, UsageError } from './args.js';
import { accountStore } from './account-target.js';
import { openForReading } from './database.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flagsOnly, optional, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { printJson } from './output.js';

export const EXPORT_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    candidate: optional({ placeholder: '<id>', help: 'the candidate_id whose data to export' }),
    email: optional({ placeholder: '<e>', help: 'or every candidate whose projected e-mail this is (any case), as erase finds them' }),
    phone: optional({
      placeholder: '<p>',
      help: 'or every candidate whose projected phone this is (as E.164: 06 12 34 56 78, 0612345678 and +33612345678 are one number)',
    }),
  }),
};

export const EXPORT_HELP = `Usage: prequal-hooks export --db <db> (--candidate <id> | --email <e> | --phone <p>)

Prints everything held about one candidate (GDPR article 15) as one JSON document on stdout:
the projected row, the interview responses, every stored event naming them with its state and
times, and the erasure record if they were erased. Read-only: safe beside a running receiver.

By --email or --phone, every candidate the person is (found as "erase" finds them: a person who
applied twice has two ids), as {"exported_at", "candidates": [<one document each>]}; exits 1 when
none matches.

${optionsHelp(EXPORT_OPTIONS)}`;

export const exportCommand = defineCommand({
  options: EXPORT_OPTIONS,
  help: EXPORT_HELP,
  async run(command, io) {
    const { candidate, email, phone } = command.values;
    if ([candidate, email, phone].filter((v) => v !== undefined).length !== 1)
      throw new UsageError('name the candidate with exactly one of --candidate <id>, --email <e> or --phone <p>');
    const { location, postgres } = databaseOf(command);
    const opened = await openForReading(location, postgres);
    try {
      const store = await accountStore(opened, location, command.values.account);
      if (candidate !== undefined) printJson(io, await exportCandidate(store, candidate));
      else printJson(io, await exportPerson(store, email !== undefined ? { email } : { phone: phone! }));
    } catch (error) {
      if (error instanceof UnknownCandidateError) throw new CommandError(error.message);
      throw error;
    } finally {
      await opened.close();
    }
    return 0;
  },
});
