// prequal-hooks copy: every account of one database into an empty one, SQLite to PostgreSQL or back
// (how: src/transfer/copy.ts).
import { existsSync } from 'node:fs';
import { loadKeyring } from '../accounts/key-file.js';
import { displayLocation, isPostgresUrl } from '../store/open.js';
import { copyDatabase } from '../transfer/copy.js';
import { databasePath, UsageError } from './args.js';
import { ACCOUNTS_KEY_OPTIONS } from './accounts-options.js';
import { defineCommand } from './command.js';
import { flag, flagsOnly, optional, optionsHelp } from './options.js';
import { printJson } from './output.js';

export const COPY_OPTIONS = {
  ...flagsOnly({
    from: optional({ placeholder: '<path|url>', help: 'the database to copy: a SQLite file or a postgres:// URL (required; only read)' }),
    to: optional({
      placeholder: '<path|url>',
      help: 'where to copy it: a postgres:// URL or a SQLite file (required; created and migrated if need be; must hold no rows)',
    }),
  }),
  schema: optional({ placeholder: '<name>', help: 'PostgreSQL: the schema of the tables, at the PostgreSQL end', defaultHelp: 'public' }),
  ...ACCOUNTS_KEY_OPTIONS,
  ...flagsOnly({ json: flag({ help: 'print what was copied, per table, as JSON' }) }),
};

export const COPY_HELP = `Usage: prequal-hooks copy --from <sqlite file> --to <postgres url> [--accounts-key-file <f>] [--json]
       prequal-hooks copy --from <postgres url> --to <sqlite file> [--accounts-key-file <f>] [--json]

Copies every account of a database into an empty one of the other engine, so that a receiver
moves from SQLite to PostgreSQL (or back) without losing a thing: the events as received, with
their identities, receive times, states and dead letters; the projected tables; the accounts, with
their secrets and API keys as they are sealed (the same accounts key opens them at the target);
the destinations, with their filters, queues, dead deliveries and where each stands; the change
log with its numbering and what retention dropped; erasures and what their hooks still owe;
settings and operator events. A receiver started on the target goes on where the source's
stopped: a redelivered event is a duplicate, the next change is numbered after the last one, a
destination sends nothing twice and skips nothing.

The source is only read, in one snapshot; the target is written in one transaction, so that an
interrupted copy writes nothing. Refused (exit 1, nothing written) while a receiver runs on
either database (stop serve and every replica first), when the target holds any rows, and when a
sealed value does not open under the accounts key. The accounts key is read from
--accounts-key-file, or beside a SQLite source (<file>.accounts-key); the receivers on the target
need the same file (PostgreSQL: --accounts-key-file on every replica). docs/postgresql.md,
"Moving from SQLite", gives the steps.

${optionsHelp(COPY_OPTIONS)}

Prints the rows copied per table and exits 0; exits 1 when refused or when the copy failed
(nothing written), 2 when called wrongly.`;

function location(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} <path|url> is required`);
  return databasePath(value, {});
}

/** The key file to check the sealed values with: the one given, or the one beside a SQLite source. */
function keyFileOf(given: string | undefined, from: string): string | undefined {
  if (given !== undefined) return given;
  const beside = `${from}.accounts-key`;
  return !isPostgresUrl(from) && existsSync(beside) ? beside : undefined;
}

export const copy = defineCommand({
  options: COPY_OPTIONS,
  help: COPY_HELP,
  async run(command, io) {
    const { values } = command;
    const from = location(values.from, 'from');
    const to = location(values.to, 'to');
    if (values.schema !== undefined && !isPostgresUrl(from) && !isPostgresUrl(to))
      throw new UsageError('--schema is for a PostgreSQL database, and neither --from nor --to is one');
    const keyFile = keyFileOf(values['accounts-key-file'], from);
    const keyring = keyFile === undefined ? undefined : loadKeyring(keyFile);
    for (const warning of keyring?.warnings ?? []) io.stderr.write(`prequal-hooks copy: ${warning}\n`);
    const report = await copyDatabase(from, to, {
      ...(values.schema !== undefined && { schema: values.schema }),
      ...(keyring !== undefined && { keyring }),
      onProgress(table, rows) {
        if (rows % 100_000 === 0) io.stderr.write(`prequal-hooks copy: ${table}: ${rows} rows\n`);
      },
    });
    if (values.json) {
      printJson(io, report);
    } else {
      const width = Math.max(...Object.keys(report.tables).map((t) => t.length));
      io.stdout.write(`copied ${displayLocation(from)} to ${displayLocation(to)} in ${report.ms} ms:\n`);
      for (const [table, rows] of Object.entries(report.tables)) io.stdout.write(`  ${table.padEnd(width)}  ${rows}\n`);
      io.stdout.write(
        report.sealedChecked === null
          ? 'sealed values not checked (no accounts key file): the target needs the key file the source used\n'
          : `${report.sealedChecked} sealed values open under the accounts key ${keyFile}: give the target's receivers that file\n`,
      );
    }
    return 0;
  },
});
