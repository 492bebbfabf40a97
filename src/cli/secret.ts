import { parseArgs } from 'node:util';
import { GENERATED_SECRET } from '../store/settings.js';
import { CommandError, databasePath, databaseSchema, DB_FLAG, DEFAULT_DB, HELP_FLAG, parsed, type CommandIo } from './args.js';
import { displayLocation, openForReading } from './database.js';

export const SECRET_HELP = `Usage: prequal-hooks secret [--db <path|url>] [--schema <name>]

Prints the webhook secret that "prequal-hooks serve" generated and stored in the database
when it was started without one, to paste in the agency dashboard (API section, Webhooks tab).

Options (environment fallback in brackets):
  --db <path>      SQLite file or postgres:// URL [PREQUAL_HOOKS_DB] (default ${DEFAULT_DB}); must exist
  --schema <name>  PostgreSQL: the schema of the tables [PREQUAL_HOOKS_SCHEMA] (default public)
  -h, --help       show this help`;

export async function secret(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parsed(() => parseArgs({ args: argv, strict: true, options: { ...HELP_FLAG, ...DB_FLAG } }));
  if (values.help) {
    io.stdout.write(`${SECRET_HELP}\n`);
    return 0;
  }
  const path = databasePath(values.db, io.env);
  const store = await openForReading(path, databaseSchema(values.schema, io.env, path));
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
}
