// Secrets from files, the convention of Kubernetes and Docker secrets and systemd credentials: an
// option marked `fileVariant` in a table gets `--<option>-file` and its variables with `_FILE`,
// made here once for every such option; the file's content then stands for the option's value.
import { readFileSync, statSync } from 'node:fs';
import { CommandError, readFailure, UsageError } from './args.js';
import { envNames, optional, type OptionSpec, type OptionTable, type ParsedCommand } from './options.js';

/** The `-file` option of a marked option (`secret` → `secret-file`). */
function fileOptionOf(name: string): string {
  return `${name}-file`;
}

/**
 * The table with `--X-file <path>` (and `PREQUAL_HOOKS_X_FILE`, or each of X's variables with
 * `_FILE`) right after each option X marked `fileVariant: true`. Other options are unchanged.
 */
export function withFileVariants<O extends OptionTable>(table: O): O {
  const entries: Array<[string, OptionSpec]> = [];
  for (const [name, spec] of Object.entries(table)) {
    entries.push([name, spec]);
    if (spec.fileVariant !== true) continue;
    const oneALine = spec.kind === 'list' ? '; one a line (several during a rotation)' : '';
    entries.push([
      fileOptionOf(name),
      optional({
        placeholder: '<path>',
        help: `read --${name} from this file${oneALine}`,
        env: envNames(name, spec).map((variable) => `${variable}_FILE`),
      }),
    ]);
  }
  return Object.fromEntries(entries) as O;
}

/**
 * The non-empty lines of a secret file, trimmed (a trailing newline or CRLF is no part of a
 * secret). A missing, unreadable or empty file throws a one-line CommandError naming the file
 * and where its path came from.
 */
export function readSecretLines(path: string, from: string): string[] {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandError(`cannot read ${path} (given by ${from}): ${readFailure(error)}`);
  }
  const lines = content
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0) throw new CommandError(`${path} (given by ${from}) is empty: it must hold the secret`);
  return lines;
}

/** The one secret a file holds for a single-value option (a token, a key); more lines are refused. */
export function readSecretLine(path: string, from: string, name: string): string {
  const lines = readSecretLines(path, from);
  if (lines.length > 1) throw new CommandError(`${path} (given by ${from}) holds ${lines.length} lines: it must hold one --${name}`);
  return lines[0]!;
}

/**
 * Puts each given file's content in place of its option's value, as if it had been given
 * directly: a list takes every line, a single value the only line (parsed as the option parses
 * it). A flag beats a variable, whichever of the pair each is; both as flags, or both as
 * variables, is a usage error.
 */
export function resolveFileVariants<O extends OptionTable>(
  table: O,
  command: ParsedCommand<O>,
): ParsedCommand<O> & { files: Partial<Record<keyof O, string>> } {
  const files: Partial<Record<keyof O, string>> = {};
  const values = { ...(command.values as Record<string, unknown>) };
  const sources = { ...(command.sources as Record<string, ParsedCommand<O>['sources'][keyof O]>) };
  for (const [name, spec] of Object.entries(table)) {
    const fileOption = fileOptionOf(name);
    const path = values[fileOption];
    if (spec.fileVariant !== true || typeof path !== 'string') continue;
    const direct = sources[name]!;
    const file = sources[fileOption]!;
    if (direct.from !== 'default') {
      if (direct.from === file.from) throw new UsageError(`give ${direct.name} or ${file.name}, not both`);
      if (direct.from === 'flag') continue;
    }
    const from = file.from === 'default' ? `--${fileOption}` : file.name;
    if (spec.kind === 'list') values[name] = readSecretLines(path, from);
    else if (spec.kind === 'value') values[name] = spec.parse(readSecretLine(path, from, name), `the --${name} in ${path}`);
    sources[name] = { from: file.from === 'env' ? 'env' : 'flag', name: `${from} (${path})` };
    files[name as keyof O] = path;
  }
  return { ...command, files, values: values as ParsedCommand<O>['values'], sources: sources as ParsedCommand<O>['sources'] };
}

/** A file holding a secret, and the option or variable that named it, as errors and warnings say. */
export interface SecretFile {
  path: string;
  from: string;
}

/**
 * The warning a secret file deserves when other users can read or change it (group or others
 * bits), as the database gets: its path, where it was given and its mode, never its content.
 * Undefined when it is owner-only, or cannot be looked at (reading it says why).
 */
export function looseFileWarning(file: SecretFile, holds: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(file.path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o066) === 0) return undefined;
  const how = (mode & 0o044) !== 0 ? 'read' : 'changed';
  return `${file.path} (given by ${file.from}) can be ${how} by other users (mode ${mode.toString(8)}); it holds ${holds}: chmod 600 ${file.path}`;
}
