// What every command does before its own work: its options parsed from argv and the environment
// (a mistake is a UsageError: exit 2), and on --help or -h its help printed, exit 0, before
// anything is checked, read or opened.
import { UsageError, type CommandIo } from './args.js';
import { resolveFileVariants } from './file-variants.js';
import { optionsHelp, parseCommand, type OptionTable, type ParsedCommand } from './options.js';

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

/** A verb of a command of verbs (`accounts add`, `destinations retry`): its options parsed (file variants read), its own --help. */
export function defineVerb<O extends OptionTable>(
  group: string,
  name: string,
  options: O,
  run: (command: ParsedCommand<O>, io: CommandIo) => Promise<number>,
): Command {
  return defineCommand({
    options,
    help: `Usage: prequal-hooks ${group} ${name} [options]\n\n${optionsHelp(options)}`,
    run: (parsed, io) => run(resolveFileVariants(options, parsed), io),
  });
}

/**
 * A command of verbs: the first argument names the verb, which runs with the rest; none (exit 2),
 * --help, -h or help prints `help`; an unknown verb is a usage error listing the verbs.
 */
export function defineVerbs(help: string, verbs: Readonly<Record<string, Command>>): Command {
  return async (argv, io) => {
    const [name, ...rest] = argv;
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      io.stdout.write(`${help}\n`);
      return name === undefined ? 2 : 0;
    }
    const run = verbs[name];
    if (run === undefined) throw new UsageError(`unknown verb "${name}": use ${Object.keys(verbs).join(', ')}`);
    return await run(rest, io);
  };
}
