import { GENERATED_SECRET } from '../store/settings.js';
import { CommandError, type CommandIo } from './args.js';
import { databaseOf, databaseOptions, optionsHelp, parseCommand } from './options.js';
import { displayLocation, openForReading } from './database.js';

export const SECRET_OPTIONS = databaseOptions('must exist');

export const SECRET_HELP = `Usage: prequal-hooks secret [--db <path|url>] [--schema <name>]

Prints the webhook secret that "prequal-hooks serve" generated and stored in the database
when it was started without one, to paste in the agency dashboard (API section, Webhooks tab).

${optionsHelp(SECRET_OPTIONS)}`;

export async function secret(argv: string[], io: CommandIo): Promise<number> {
  const command = parseCommand(SECRET_OPTIONS, argv, io.env);
  if (command.help) {
    io.stdout.write(`${SECRET_HELP}\n`);
    return 0;
  }
  const { location: path, postgres } = databaseOf(command);
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
}
