// What every command does before its own work: its options parsed from argv and the environment
// (a mistake is a UsageError: exit 2), and on --help or -h its help printed, exit 0, before
// anything is checked, read or opened.
import type { CommandIo } from './args.js';
import { parseCommand, type OptionTable, type ParsedCommand } from './options.js';

/** A command as main.ts runs it: its arguments after the command's name, and its exit code. */
export type Command = (argv: string[], io: CommandIo) => Promise<number>;

interface CommandDefinition<O extends OptionTable> {
  /** The option table: flags, variables, parsers, defaults, help. */
  options: O;
  /** The whole text --help prints. */
  help: string;
  /** Whether it takes arguments besides its options (files, an event kind, inbox ids). */
  positionals?: boolean;
  /** The command's own work, given its options parsed; never called for --help. */
  run: (command: ParsedCommand<O>, io: CommandIo) => Promise<number>;
}

export function defineCommand<O extends OptionTable>(definition: CommandDefinition<O>): Command {
  const { options, help, positionals = false, run } = definition;
  return async (argv, io) => {
    const command = parseCommand(options, argv, io.env, positionals);
    if (command.help) {
      io.stdout.write(`${help}\n`);
      return 0;
    }
    return run(command, io);
  };
}
