// A command run in this process through its `(argv, io)` signature, as main.ts runs it: what it
// wrote on stdout and stderr, and its exit code or the error main.ts turns into one.
import { Writable } from 'node:stream';
import type { CommandIo } from '../../src/cli/args.js';
import { cliEnv } from './cli-process.js';

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
