#!/usr/bin/env node
// prequal-hooks: routes to one file per command; expected errors become exit codes, not stack traces.
import { CommandError, UsageError, type CommandIo } from './args.js';
import { serve } from './serve.js';

type Command = (argv: string[], io: CommandIo) => Promise<number>;

const COMMANDS: Record<string, { run: Command; summary: string }> = {
  serve: { run: serve, summary: 'run the standalone webhook receiver' },
};

const USAGE = `Usage: prequal-hooks <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(14)} ${summary}`)
  .join('\n')}

Run "prequal-hooks <command> --help" for a command's options.`;

async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.stderr.write(`prequal-hooks: unknown command "${name}". Run "prequal-hooks --help".\n`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`prequal-hooks ${name}: ${error.message}. Run "prequal-hooks ${name} --help".\n`);
      return 2;
    }
    if (error instanceof CommandError || (error instanceof Error && ['DatabaseTooNewError', 'ConfigurationError', 'SqliteError'].includes(error.name))) {
      io.stderr.write(`prequal-hooks ${name}: ${error.message}\n`);
      return 1;
    }
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      io.stderr.write(`prequal-hooks ${name}: the port is already in use (${(error as Error).message}). Choose another with --port.\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
