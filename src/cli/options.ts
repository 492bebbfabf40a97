// One table of options per command: each option is declared once (flag, environment variables,
// parser, default, help line, secret or not), and parsing, the environment fallback, the help text
// and a masked dump of the effective configuration are all made from it.
import { parseArgs } from 'node:util';
import { displayLocation } from '../store/open.js';
import { DEFAULT_ACCOUNT, isAccountId } from '../receive/account.js';
import { databasePath, DEFAULT_DB, parsed, schemaFor, UsageError } from './args.js';

/** Where an option's value came from; errors name it as the user wrote it (`PORT`, not `--port`). */
export type Source = { from: 'flag'; name: string } | { from: 'env'; name: string } | { from: 'default' };

interface Common {
  help: string;
  /** The value's name in the help (`<n>`, `<path|url>`); flags have none. */
  placeholder?: string;
  short?: string;
  /**
   * The environment variables read when the flag is absent, first found wins. Default: one,
   * PREQUAL_HOOKS_ and the flag in upper snake case; `[]` for none.
   */
  env?: readonly string[];
  /** Masked in the configuration dump, never echoed in an error. */
  secret?: boolean;
  /**
   * Also readable from a file: `withFileVariants` (file-variants.ts) adds `--<option>-file` and
   * its `_FILE` variables. For secrets, which have no place in a process list or an environment.
   */
  fileVariant?: boolean;
  /** How the dump shows a value that is partly secret (a URL's password). */
  show?: (value: never) => unknown;
}

export interface ValueOption<T> extends Common {
  kind: 'value';
  /** Turns the text into the value, throwing UsageError that starts with `name`. */
  parse: (text: string, name: string) => T;
  default: T;
  /** How the default reads in the help; none: the help says nothing of it. */
  defaultHelp?: string;
}

export interface FlagOption extends Common {
  kind: 'flag';
}

export interface ListOption extends Common {
  kind: 'list';
  /** Each value taken whole, not split at commas (a header's value may hold one); a variable's values one a line. */
  whole?: boolean;
}

export type OptionSpec = ValueOption<unknown> | FlagOption | ListOption;
export type OptionTable = Record<string, OptionSpec>;

/** What a table parses into: a value option's parsed type, a flag's boolean, a list's strings. */
export type OptionValues<O extends OptionTable> = {
  -readonly [K in keyof O]: O[K] extends ValueOption<infer T> ? T : O[K] extends FlagOption ? boolean : string[];
};

/** A value option; its type is what `parse` returns. */
export function value<T>(spec: Omit<ValueOption<T>, 'kind'>): ValueOption<T> {
  return { kind: 'value', ...spec };
}

/** A string option with no parsing beyond "not empty"; undefined when absent. */
export function optional(spec: Omit<ValueOption<string | undefined>, 'kind' | 'parse' | 'default'>): ValueOption<string | undefined> {
  return value<string | undefined>({ ...spec, parse: nonEmpty, default: undefined });
}

export function flag(spec: Omit<FlagOption, 'kind'>): FlagOption {
  return { kind: 'flag', ...spec };
}

/** Repeatable, and comma-separated in one value or variable (e.g. secrets during a rotation). */
export function list(spec: Omit<ListOption, 'kind'>): ListOption {
  return { kind: 'list', ...spec };
}

function nonEmpty(textValue: string, name: string): string {
  if (textValue === '') throw new UsageError(`${name} needs a value`);
  return textValue;
}

export function envNames(flagName: string, spec: OptionSpec): readonly string[] {
  return spec.env ?? [`PREQUAL_HOOKS_${flagName.toUpperCase().replaceAll('-', '_')}`];
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off', '']);

function fromEnvironment(flagName: string, spec: OptionSpec, env: NodeJS.ProcessEnv): { name: string; text: string } | undefined {
  for (const name of envNames(flagName, spec)) {
    const textValue = env[name];
    // An empty variable is how shells unset one for a command: it counts as absent.
    if (textValue !== undefined && textValue !== '') return { name, text: textValue };
  }
  return undefined;
}

function splitList(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export interface ParsedCommand<O extends OptionTable> {
  values: OptionValues<O>;
  sources: Record<keyof O, Source>;
  positionals: string[];
  help: boolean;
}

/**
 * Parses argv against the table; a flag given wins over the environment, which wins over the
 * default. Every error is a UsageError naming the flag or variable the value came from.
 */
export function parseCommand<O extends OptionTable>(
  table: O,
  argv: string[],
  env: NodeJS.ProcessEnv,
  allowPositionals = false,
): ParsedCommand<O> {
  const declared: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, spec] of Object.entries(table)) {
    declared[name] = {
      type: spec.kind === 'flag' ? 'boolean' : 'string',
      ...(spec.kind === 'list' && { multiple: true }),
      ...(spec.short !== undefined && { short: spec.short }),
    };
  }
  const { values: given, positionals } = parsed(() => parseArgs({ args: argv, strict: true, allowPositionals, options: declared }));
  const values: Record<string, unknown> = {};
  const sources: Record<string, Source> = {};
  for (const [name, spec] of Object.entries(table)) {
    const flagValue = given[name] as string | boolean | string[] | undefined;
    const environment = flagValue === undefined ? fromEnvironment(name, spec, env) : undefined;
    const source: Source =
      flagValue !== undefined
        ? { from: 'flag', name: `--${name}` }
        : environment !== undefined
          ? { from: 'env', name: environment.name }
          : { from: 'default' };
    sources[name] = source;
    if (spec.kind === 'flag') {
      if (environment === undefined) values[name] = flagValue === true;
      else if (TRUE.has(environment.text.toLowerCase())) values[name] = true;
      else if (FALSE.has(environment.text.toLowerCase())) values[name] = false;
      else throw new UsageError(`${environment.name} must be 1 or 0 (true or false), got "${environment.text}"`);
    } else if (spec.kind === 'list') {
      const texts = flagValue !== undefined ? (flagValue as string[]) : environment !== undefined ? [environment.text] : [];
      values[name] =
        spec.whole === true
          ? texts.flatMap((t) => (flagValue === undefined ? t.split('\n') : [t])).filter((t) => t.trim() !== '')
          : splitList(texts);
    } else {
      const textValue = (flagValue as string | undefined) ?? environment?.text;
      values[name] = textValue === undefined ? spec.default : spec.parse(textValue, source.from === 'default' ? `--${name}` : source.name);
    }
  }
  return { values: values as OptionValues<O>, sources: sources as Record<keyof O, Source>, positionals, help: given.help === true };
}

const LEFT = 26;
const WIDTH = 100;

function wrap(words: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of words.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** The "Options" block of a command's help: one entry an option, its variables in brackets. */
export function optionsHelp(table: OptionTable): string {
  const entries = Object.entries(table).map(([name, spec]) => {
    const left = `  ${spec.short === undefined ? '' : `-${spec.short}, `}--${name}${spec.placeholder === undefined ? '' : ` ${spec.placeholder}`}`;
    const env = envNames(name, spec);
    const defaultHelp = spec.kind === 'value' && spec.defaultHelp !== undefined ? ` (default ${spec.defaultHelp})` : '';
    const description = `${spec.help}${env.length === 0 ? '' : ` [${env.join(', ')}]`}${defaultHelp}`;
    const [first = '', ...rest] = wrap(description, WIDTH - LEFT);
    const head = left.length + 1 < LEFT ? `${left.padEnd(LEFT)}${first}` : `${left}\n${' '.repeat(LEFT)}${first}`;
    return [head, ...rest.map((line) => `${' '.repeat(LEFT)}${line}`)].join('\n');
  });
  return [
    'Options (environment variables in brackets; a flag wins over them):',
    ...entries,
    `${'  -h, --help'.padEnd(LEFT)}show this help`,
  ].join('\n');
}

/** The effective configuration as JSON-ready data: each option's value and where it came from, secrets masked. */
export function configurationDump<O extends OptionTable>(
  table: O,
  command: ParsedCommand<O>,
): Record<string, { value: unknown; from: string }> {
  const dump: Record<string, { value: unknown; from: string }> = {};
  for (const [name, spec] of Object.entries(table)) {
    if (name === 'print-config') continue;
    const source = command.sources[name as keyof O];
    const given = (command.values as Record<string, unknown>)[name];
    const raw = spec.show === undefined || given === undefined ? given : spec.show(given as never);
    const shown =
      spec.secret && raw !== undefined && !(Array.isArray(raw) && raw.length === 0)
        ? Array.isArray(raw)
          ? raw.map(() => '***')
          : '***'
        : raw;
    dump[name] = { value: shown === undefined ? null : shown, from: source.from === 'default' ? 'default' : source.name };
  }
  return dump;
}

/** The options of a table that a command reads only from its flags (no environment variable). */
export function flagsOnly<O extends OptionTable>(table: O): O {
  return Object.fromEntries(Object.entries(table).map(([name, spec]) => [name, { env: [], ...spec }])) as O;
}

/** `--json` and `--table`: force one format; by default a table on a terminal, JSON otherwise. */
export const FORMAT_OPTIONS = flagsOnly({
  json: flag({ help: 'print JSON (the default when stdout is not a terminal)' }),
  table: flag({ help: 'print aligned tables (the default on a terminal)' }),
});

/** `--db` and `--schema`, with the help that says whether the command creates a missing database. */
export function databaseOptions(creates: 'creates' | 'must exist') {
  return {
    db: value({
      placeholder: '<path|url>',
      help: `SQLite file${creates === 'creates' ? ' (folder created)' : ''} or postgres:// URL${creates === 'must exist' ? '; must exist' : ''}`,
      default: DEFAULT_DB,
      defaultHelp: DEFAULT_DB,
      parse: (textValue: string) => textValue,
      show: (location: string) => displayLocation(location),
    }),
    schema: optional({ placeholder: '<name>', help: 'PostgreSQL: the schema of the tables', defaultHelp: 'public' }),
  };
}

/** `--account`: the account a command reads or writes (docs/accounts.md); the default account when absent. */
export const ACCOUNT_OPTIONS = {
  account: value({
    placeholder: '<id>',
    help: 'the account whose rows the command reaches (accounts list shows them)',
    default: DEFAULT_ACCOUNT,
    defaultHelp: DEFAULT_ACCOUNT,
    parse: (textValue: string, name: string) => {
      if (!isAccountId(textValue)) throw new UsageError(`${name} must be an account id (a-z, 0-9, - and _, up to 63), got "${textValue}"`);
      return textValue;
    },
  }),
};

/** Where a command's database is: a SQLite path made absolute or a postgres:// URL, and its schema. */
export function databaseOf(command: ParsedCommand<ReturnType<typeof databaseOptions>>): {
  location: string;
  postgres: { schema?: string };
} {
  const location = databasePath(command.values.db, {});
  return { location, postgres: schemaFor(command.values.schema, command.sources.schema.from === 'flag', location) };
}
