import { resolve } from 'node:path';
import { withoutCredentials } from '../client/origin.js';

/** A mistake in how a command was called: exit 2 with a one-line hint, no stack trace. */
export class UsageError extends Error {
  /** Always `UsageError`, to tell it apart from other errors. */
  override name = 'UsageError';
}

/** An expected failure while running a command: exit 1 with its message, no stack trace. */
export class CommandError extends Error {
  /** Always `CommandError`, to tell it apart from other errors. */
  override name = 'CommandError';
}

export interface CommandIo {
  /** Read by the commands that take input there (`secret --fingerprint`); process.stdin when absent. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/**
 * Runs a node:util parseArgs call, turning its errors into UsageError (exit 2, one line) in our
 * words for the common mistakes: parseArgs' own ("Option '--limit' argument is ambiguous") puzzle.
 */
/** Why a file could not be read, in words: 'no such file', 'permission denied', or the system's code. */
export function readFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? (error as Error).message);
}

export function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(usageMessage(error as Error & { code?: string }));
  }
}

function usageMessage(error: Error & { code?: string }): string {
  const first = error.message.split('\n')[0]!;
  const option = /'(-{1,2}[^' ]+)/.exec(first)?.[1];
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? first}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument "${/'([^']*)'/.exec(first)?.[1] ?? first}"`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/argument is ambiguous/.test(first)) {
        return `${option} needs a value; a value that starts with "-" is written ${option}=<value>`;
      }
      if (/argument missing/.test(first)) return `${option} needs a value`;
      if (/does not take an argument/.test(first)) return `${option} takes no value`;
      return first;
    default:
      return first;
  }
}

/** A whole number within bounds, from a flag or an environment variable. */
export function integer(name: string, value: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

const SIZE = /^(\d+)\s*(b|kb|k|kib|mb|m|mib)?$/i;

/** A size such as 1048576, 512kb or 1mb (binary units). */
export function byteSize(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const m = SIZE.exec(value.trim());
  if (m === null) throw new UsageError(`${name} must be a size such as 1048576, 512kb or 1mb, got "${value}"`);
  const unit = (m[2] ?? 'b').toLowerCase();
  const factor = unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 * 1024 : 1;
  const size = Number(m[1]) * factor;
  if (size < 1) throw new UsageError(`${name} must be at least 1 byte`);
  return size;
}

/** Where a database is when no --db or PREQUAL_HOOKS_DB says otherwise (relative to the working folder). */
export const DEFAULT_DB = './data/prequal-hooks.db';

/**
 * The database of a command: `--db`, then PREQUAL_HOOKS_DB, then ./data/prequal-hooks.db. A SQLite
 * path is made absolute; a `postgres://` URL is kept as given.
 */
export function databasePath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = flag ?? (env.PREQUAL_HOOKS_DB || DEFAULT_DB);
  return isPostgresLocation(given) ? given : resolve(given);
}

function isPostgresLocation(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location);
}

/**
 * The PostgreSQL schema of a command's database (`--schema` or PREQUAL_HOOKS_SCHEMA; none means
 * `public`), given whether it came from the flag: a flag for a SQLite file is a mistake worth
 * saying; from the environment (set once for every command) it is ignored there.
 */
export function schemaFor(schema: string | undefined, fromFlag: boolean, location: string): { schema?: string } {
  if (schema === undefined) return {};
  if (!isPostgresLocation(location)) {
    if (fromFlag)
      throw new UsageError(
        '--schema applies to a PostgreSQL database (a postgres:// URL in --db or PREQUAL_HOOKS_DB), not to a SQLite file',
      );
    return {};
  }
  if (schema === '') throw new UsageError('--schema needs a name');
  return { schema };
}

/**
 * A receiver's webhook URL (send --url, sandbox --webhook-url): absolute, http or https, and
 * without a user name or password, which fetch refuses; errors show it with those masked.
 */
export function webhookUrl(name: string, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${name} must be an absolute URL such as http://127.0.0.1:8787/webhooks, got "${withoutCredentials(text)}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${name} must be http or https, got "${withoutCredentials(text)}"`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError(`${name} must not hold a user name or password, got "${withoutCredentials(text)}"`);
  return url;
}
