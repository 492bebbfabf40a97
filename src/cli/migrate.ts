// prequal-hooks migrate: the schema upgrade as a step of its own (after a backup), for operators
// who start `serve --no-migrate`; the same migrations a start applies, once across replicas.
import { existsSync } from 'node:fs';
import { isPostgresUrl, migrateDatabase, type MigrationReport } from '../store/open.js';
import { displayLocation } from './database.js';
import { databaseOf, databaseOptions, flag, flagsOnly, optionsHelp } from './options.js';
import { defineCommand } from './command.js';
import { printJson } from './output.js';

export const MIGRATE_OPTIONS = {
  ...databaseOptions('creates'),
  ...flagsOnly({
    'dry-run': flag({ help: 'list the pending migrations, apply nothing (a missing database is not created)' }),
    json: flag({ help: 'print the result as JSON' }),
  }),
};

export const MIGRATE_HELP = `Usage: prequal-hooks migrate --db <db> [--schema <name>] [--dry-run] [--json]

Lists the migrations the database needs (the SQL files in the package's migrations/ folder that
it has not recorded) and applies them, as "prequal-hooks serve" does at start: on SQLite each in
its own transaction, on PostgreSQL all in one, under an advisory lock, so that replicas starting
at the same time migrate once. A SQLite file that does not exist is created (with its folder,
owner-only, as serve creates it) and every migration applied; with --dry-run nothing is created
and every migration is listed. Take a backup first ("prequal-hooks backup", or pg_dump): a newer
schema is refused by older versions, and rolling back means restoring that backup. Then start
"serve --no-migrate", which refuses a database that still needs migrations.

${optionsHelp(MIGRATE_OPTIONS)}

Exits 0 when the database is (or, with --dry-run, would be) up to date, 1 when it cannot be
opened or is newer than this version, 2 when the command is called wrongly.`;

const listed = (pending: MigrationReport['pending']) => pending.map((m) => `  ${String(m.version).padStart(3, '0')} ${m.name}`).join('\n');

export const migrateCommand = defineCommand({
  options: MIGRATE_OPTIONS,
  help: MIGRATE_HELP,
  async run(command, io) {
    const { location, postgres } = databaseOf(command);
    const dryRun = command.values['dry-run'];
    if (!isPostgresUrl(location) && !existsSync(location)) {
      io.stderr.write(
        `prequal-hooks migrate: no database at ${location}; ${dryRun ? 'every migration would apply (a dry run creates nothing)' : 'creating it'}\n`,
      );
    }
    const report = await migrateDatabase(location, { ...postgres, dryRun });
    if (command.values.json) {
      printJson(io, { ...report, dryRun });
      return 0;
    }
    const where = displayLocation(location);
    if (report.pending.length === 0) io.stdout.write(`${where} is up to date (schema version ${report.known}).\n`);
    else if (dryRun)
      io.stdout.write(
        `${where} is at schema version ${report.from}; ${report.pending.length} pending (nothing applied, --dry-run):\n${listed(report.pending)}\n`,
      );
    else if (report.applied.length === 0)
      io.stdout.write(`${where} was migrated meanwhile by another process: it is up to date (schema version ${report.known}).\n`);
    else
      io.stdout.write(
        `${where}: schema version ${report.from} → ${report.known}, applied:\n${listed(report.pending.filter((m) => report.applied.includes(m.version)))}\n`,
      );
    return 0;
  },
});
