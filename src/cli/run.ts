// prequal-hooks' routing: one file per command; expected errors become exit codes, not stack traces.
import { readFileSync } from 'node:fs';
import { CommandError, UsageError, type CommandIo } from './args.js';
import { COMMANDS, USAGE } from './commands.js';

/** The commands that open a listening socket (their address errors are about --host and --port). */
const LISTENING_COMMANDS = new Set(['serve', 'sandbox']);

/**
 * The command line without the process: routes `argv` (the arguments after `prequal-hooks`) to its
 * command and turns the errors it expects into an exit code and one line on stderr. main.ts runs it
 * on the process's streams and environment; tests run it on their own (test/support/command-io.ts).
 */
export async function run(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    io.stdout.write(`${pkg.version}\n`);
    return 0;
  }
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
    const load = await command.load();
    return await load(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`prequal-hooks ${name}: ${error.message}. Run "prequal-hooks ${name} --help".\n`);
      return 2;
    }
    if (
      error instanceof CommandError ||
      (error instanceof Error &&
        [
          'DatabaseTooNewError',
          'ConfigurationError',
          'SqliteError',
          'SchemaError',
          'MigrationsPendingError',
          'StoreUnavailableError',
          'DatabasePathError',
          'AccountsKeyError',
          'TransferError',
        ].includes(error.name))
    ) {
      io.stderr.write(`prequal-hooks ${name}: ${error.message}\n`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      io.stderr.write(`prequal-hooks ${name}: the port is already in use (${(error as Error).message}). Choose another with --port.\n`);
      return 1;
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL' || code === 'EACCES' || code === 'EAI_FAIL') {
      // Only the commands that listen were given a host and port; for the others (a database or
      // API address that does not resolve), --host is not the fix.
      const hint = LISTENING_COMMANDS.has(name)
        ? `cannot listen there (${code}: ${(error as Error).message}). Check --host and --port.`
        : `cannot reach that address (${code}: ${(error as Error).message}). Check the host name in --db or the URL given.`;
      io.stderr.write(`prequal-hooks ${name}: ${hint}\n`);
      return 1;
    }
    // Anything else is still one line, never a stack trace; the stack is there for those who ask.
    io.stderr.write(`prequal-hooks ${name}: ${(error as Error)?.message ?? String(error)}\n`);
    if (io.env.PREQUAL_HOOKS_DEBUG) io.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
    else io.stderr.write(`prequal-hooks ${name}: (set PREQUAL_HOOKS_DEBUG=1 for the details)\n`);
    return 1;
  }
}
