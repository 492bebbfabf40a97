// prequal-hooks backup: an online, consistent copy of a SQLite database while serve writes to it
// (how: src/store/sqlite/backup.ts), written beside its destination and renamed into place.
import { chmodSync, existsSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isPostgresUrl } from '../store/open.js';
import { copyDatabaseFile } from '../store/sqlite/backup.js';
import { CommandError, UsageError } from './args.js';
import { displayLocation, openForReading, requireDatabaseFile } from './database.js';
import { databaseOf, databaseOptions, flag, flagsOnly, optional, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { printJson } from './output.js';

export const BACKUP_OPTIONS = {
  ...databaseOptions('must exist'),
  ...flagsOnly({
    to: optional({ placeholder: '<file>', help: 'where to write the copy (required); refused if it exists, unless --force' }),
    force: flag({ help: 'replace an existing file at --to (only once the new copy is complete)' }),
    json: flag({ help: 'print the result as JSON' }),
  }),
};

export const BACKUP_HELP = `Usage: prequal-hooks backup --db <sqlite file> --to <file> [--force] [--json]

Copies a SQLite database while "prequal-hooks serve" goes on writing to it: one consistent
snapshot (every event acknowledged before the copy started is in it), checked with
PRAGMA integrity_check, owner-only (0600), written beside --to and renamed into place once
complete, so that --to is never a partial copy. Copying the file with cp while it is written is
not safe (the WAL holds the latest commits). To restore: stop serve, put the copy in place of the
database file (and remove its -wal and -shm files), start serve.

PostgreSQL: use pg_dump (this command says how, and exits 2).

${optionsHelp(BACKUP_OPTIONS)}`;

function postgresAdvice(location: string, schema: string | undefined): string {
  const url = displayLocation(location);
  const only = schema === undefined ? '' : ` --schema=${schema}`;
  return `prequal-hooks backup copies SQLite files; for PostgreSQL use its own tools, which copy a consistent snapshot while serve writes:
  pg_dump --format=custom${only} --file=prequal-hooks.dump "${url}"
and to restore, into an empty database (serve stopped):
  pg_restore --no-owner --dbname="<url>" prequal-hooks.dump
Or take base backups with WAL archiving (pg_basebackup) for point-in-time recovery.\n`;
}

export const backup = defineCommand({
  options: BACKUP_OPTIONS,
  help: BACKUP_HELP,
  async run(command, io) {
    const { location, postgres } = databaseOf(command);
    if (isPostgresUrl(location)) {
      io.stderr.write(postgresAdvice(location, postgres.schema));
      return 2;
    }
    const to = command.values.to;
    if (to === undefined || to === '') throw new UsageError('--to <file> is required');
    requireDatabaseFile(location);
    if (existsSync(to) && realpathSync(to) === realpathSync(location))
      throw new CommandError(`--to names the database itself (${location}): give another file`);
    if (existsSync(to) && !command.values.force) throw new CommandError(`${to} exists: choose another --to, or give --force to replace it`);
    // The schema checked (ours, this version's) before anything is written.
    await (await openForReading(location)).close();
    const started = performance.now();
    const partial = join(dirname(to), `.${basename(to)}.partial-${process.pid}`);
    rmSync(partial, { force: true });
    const previous = process.umask(0o077); // the copy holds the secret and personal data: owner-only from its creation
    try {
      const copied = copyDatabaseFile(location, partial);
      if (!copied.ok) throw new CommandError(`the copy failed its integrity check (${copied.problem}); ${to} was not written`);
      const { events } = copied;
      chmodSync(partial, 0o600);
      renameSync(partial, to);
      const result = { from: location, to, events, bytes: statSync(to).size, ms: Math.round(performance.now() - started) };
      if (command.values.json) printJson(io, result);
      else
        io.stdout.write(
          `copied ${location} to ${to}: ${result.events} stored events, ${(result.bytes / 1048576).toFixed(1)} MB, integrity ok, in ${result.ms} ms\n`,
        );
      return 0;
    } finally {
      process.umask(previous);
      rmSync(partial, { force: true });
    }
  },
});
