// The command line in this process, through the commands' `(argv, io)` signature: `runCli` runs
// `prequal-hooks <argv>` as main.ts does (src/cli/run.ts: routing, errors turned into exit codes),
// `runCommand` one command alone (its errors thrown, not mapped). Both collect stdout and stderr
// in memory, with an environment free of the CLI's variables and stdout not a terminal. The real
// process (signals, crashes, the bin itself) is test/support/cli-process.ts's.
import { Readable, Writable } from 'node:stream';
import type { CommandIo } from '../../src/cli/args.js';
import { run } from '../../src/cli/run.js';
import { cliEnv, type CliResult } from './cli-process.js';

type Command = (argv: string[], io: CommandIo) => Promise<number>;

export interface CommandRun {
  /** The exit code returned, or undefined when the command threw `error`. */
  code: number | undefined;
  error: Error | undefined;
  stdout: string;
  stderr: string;
}

function collecting(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** Runs the command with an environment free of the CLI's variables (and `env`), stdout not a terminal. */
export async function runCommand(command: Command, argv: string[], env: Record<string, string> = {}): Promise<CommandRun> {
  const stdout = collecting();
  const stderr = collecting();
  let code: number | undefined;
  let error: Error | undefined;
  try {
    code = await command(argv, { stdout: stdout.stream, stderr: stderr.stream, env: cliEnv(env) });
  } catch (thrown) {
    error = thrown as Error;
  }
  return { code, error, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * Runs `prequal-hooks <argv>` in this process, as cli-process.ts's runCliProcess runs the real
 * one: the same options (but no working folder: the process's is shared) and the same result.
 * Standard input holds `input`, or is empty (the real one's is /dev/null).
 */
export async function runCli(argv: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  const stdout = collecting();
  const stderr = collecting();
  const stdin = Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]);
  const code = await run(argv, { stdin, stdout: stdout.stream, stderr: stderr.stream, env: cliEnv(options.env) });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
