import {
  ErasureRequestError,
  eraseCandidate,
  eraseInactive,
  parseDuration,
  UnknownCandidateError,
  type ErasureReport,
  type RetentionReport,
} from '../privacy/index.js';
import { count } from '../words.js';
import { openStore } from '../store/open.js';
import type { CandidateMatch } from '../store/rows.js';
import { CommandError, UsageError, type CommandIo } from './args.js';
import { accountStore } from './account-target.js';
import { displayLocation, requireDatabaseFile } from './database.js';
import { databaseOf, ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, optional, optionsHelp, parseCommand } from './options.js';
import { defineCommand } from './command.js';
import { printJson } from './output.js';

export const ERASE_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    candidate: optional({ placeholder: '<id>', help: 'the candidate_id to erase' }),
    email: optional({ placeholder: '<e>', help: 'or every candidate whose projected e-mail this is (any case)' }),
    phone: optional({
      placeholder: '<p>',
      help: 'or every candidate whose projected phone this is (as E.164: 06 12 34 56 78, 0612345678 and +33612345678 are one number)',
    }),
    'inactive-for': optional({
      placeholder: '<duration>',
      help: 'retention: every candidate whose latest event is older than this (e.g. 730d; units s, m, h, d, w), and the rows set aside received before it',
    }),
    reason: optional({
      placeholder: '<text>',
      help: 'why (required): kept in the audit trail, the erasures table; no personal data there',
    }),
    'dry-run': flag({ help: 'say what would be erased (every candidate id), change nothing' }),
    json: flag({ help: 'print the result as JSON' }),
  }),
};

export const ERASE_HELP = `Usage: prequal-hooks erase --db <db> (--candidate <id> | --email <e> | --phone <p>) --reason <text> [--dry-run] [--json]
       prequal-hooks erase --db <db> --inactive-for <duration, e.g. 730d> --reason <text> [--dry-run] [--json]

Erases a person (GDPR article 17; docs/projection.md section 8), in one transaction: the
candidate --candidate names, or every candidate whose projected e-mail (any case) or phone (any
spacing) matches, in every campaign (a person who applied twice has two ids). Their projected rows
and interview responses are deleted, every stored row naming them (their id, e-mail or phone, as
values: never part of a longer one) is redacted to its keys (kind, timestamp and identity kept, so
that a redelivery stays a duplicate), and each erasure is recorded in the erasures table
(candidate_id, erased_at, reason, events_redacted).
Then nothing of it is left on disk that the engine can reach: SQLite's WAL is checkpointed and
truncated (its connections overwrite deleted content), PostgreSQL's tables are vacuumed. Backups
and WAL archives are the operator's to age out. Later events dated at or before the erasure, and
reconciliation, never bring the person back; a webhook dated after it is a new contact.
Safe while a receiver runs on the database.

${optionsHelp(ERASE_OPTIONS)}

Prints every candidate_id erased and how many stored rows were redacted, never the erased
values (--dry-run: what it would erase). Exits 1 when no candidate matches (nothing is changed),
2 when the command is called wrongly.`;

function matchOf(values: { candidate: string | undefined; email: string | undefined; phone: string | undefined }): CandidateMatch {
  const given = [
    values.candidate !== undefined && 'candidate',
    values.email !== undefined && 'email',
    values.phone !== undefined && 'phone',
  ].filter(Boolean);
  if (given.length !== 1)
    throw new UsageError('name the candidate with exactly one of --candidate, --email or --phone, or give --inactive-for');
  return values.candidate !== undefined
    ? { candidateId: values.candidate }
    : values.email !== undefined
      ? { email: values.email }
      : { phone: values.phone! };
}

export const erase = defineCommand({
  options: ERASE_OPTIONS,
  help: ERASE_HELP,
  async run(command, io) {
    const { values } = command;
    if (values.reason === undefined || values.reason.trim() === '')
      throw new UsageError('--reason is required: it is kept in the audit trail (say why, without personal data)');
    if (values['inactive-for'] !== undefined) {
      if ([values.candidate, values.email, values.phone].some((v) => v !== undefined))
        throw new UsageError('give --inactive-for or one candidate, not both');
      return await retention(command, io, values['inactive-for'], values.reason);
    }
    const match = matchOf(values);
    const { location, postgres } = databaseOf(command);
    requireDatabaseFile(location);
    const opened = await openStore(location, postgres);
    let report: ErasureReport;
    try {
      const store = await accountStore(opened, location, command.values.account);
      report = await eraseCandidate(store, match, { reason: values.reason, dryRun: values['dry-run'] });
    } catch (error) {
      if (error instanceof UnknownCandidateError || error instanceof ErasureRequestError)
        throw new CommandError(`${error.message}; nothing was changed`);
      throw error;
    } finally {
      await opened.close();
    }
    if (values.json) printJson(io, { ...report, database: displayLocation(location) });
    else if (report.dryRun)
      io.stdout.write(
        `dry run: would erase ${candidates(report.candidateIds)} and redact ${count(report.eventsRedacted, 'stored event')}; nothing changed\n`,
      );
    else {
      io.stdout.write(
        `erased ${candidates(report.candidateIds)}: ${count(report.eventsRedacted, 'stored event')} redacted, recorded in erasures at ${report.erasedAt}\n`,
      );
      if (!report.scrubbed)
        io.stderr.write(
          'prequal-hooks erase: a reader kept the WAL from being emptied; the erased bytes leave it at its next checkpoint (run erase again, or stop the readers)\n',
        );
    }
    return 0;
  },
});

/** The ids erased, each named: `candidate a`, or `2 candidates (a, b)` (a person who applied twice). */
function candidates(ids: readonly string[]): string {
  return ids.length === 1 ? `candidate ${ids[0]}` : `${count(ids.length, 'candidate')} (${ids.join(', ')})`;
}

/** `erase --inactive-for`: retention, by the same rules; counts only (no ids on a terminal). */
async function retention(
  command: ReturnType<typeof parseCommand<typeof ERASE_OPTIONS>>,
  io: CommandIo,
  age: string,
  reason: string,
): Promise<number> {
  const olderThan = parseDuration(age);
  if (olderThan === undefined)
    throw new UsageError(`--inactive-for must be a whole number and a unit, s, m, h, d or w (such as 730d or 104w), got "${age}"`);
  const { location, postgres } = databaseOf(command);
  requireDatabaseFile(location);
  const opened = await openStore(location, postgres);
  let report: RetentionReport;
  try {
    const store = await accountStore(opened, location, command.values.account);
    report = await eraseInactive(store, { olderThan, reason, dryRun: command.values['dry-run'] });
  } finally {
    await opened.close();
  }
  if (command.values.json) printJson(io, { ...report, database: displayLocation(location) });
  else {
    io.stdout.write(
      `${report.dryRun ? 'dry run: would erase' : 'erased'} ${count(report.candidatesErased, 'candidate')} not heard of since ${report.cutoff} ` +
        `(${count(report.eventsRedacted, 'stored event')} redacted) and redact ${count(report.setAsideRedacted, 'row')} set aside before it${report.dryRun ? '; nothing changed' : ''}\n`,
    );
  }
  return 0;
}
