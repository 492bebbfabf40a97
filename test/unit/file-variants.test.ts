// The generic *-file options: marking an option in a table is all another option needs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandError, UsageError } from '../../src/cli/args.js';
import { resolveFileVariants, withFileVariants } from '../../src/cli/file-variants.js';
import { envNames, list, optional, optionsHelp, parseCommand } from '../../src/cli/options.js';
import { tempDir } from '../support/servers.js';

const tmp = tempDir('prequal-hooks-files-');
afterAll(() => tmp.cleanup());

const TABLE = withFileVariants({
  plain: optional({ placeholder: '<p>', help: 'not marked' }),
  keys: list({ placeholder: '<k>', help: 'marked list', secret: true, fileVariant: true }),
  token: optional({ placeholder: '<t>', help: 'marked value', secret: true, fileVariant: true, env: ['APP_TOKEN', 'TOKEN'] }),
});

describe('withFileVariants', () => {
  it('adds --X-file right after each marked option, with each of its variables and _FILE', () => {
    expect(Object.keys(TABLE)).toEqual(['plain', 'keys', 'keys-file', 'token', 'token-file']);
    expect(envNames('keys-file', TABLE['keys-file' as keyof typeof TABLE])).toEqual(['PREQUAL_HOOKS_KEYS_FILE']);
    expect(envNames('token-file', TABLE['token-file' as keyof typeof TABLE])).toEqual(['APP_TOKEN_FILE', 'TOKEN_FILE']);
    expect(optionsHelp(TABLE)).toMatch(/--token-file <path>.*\[APP_TOKEN_FILE, TOKEN_FILE\]/s);
  });

  it("reads a list's lines and a value's one line, and names the file when it is missing, empty or has two values", () => {
    const keys = join(tmp.dir, 'keys');
    writeFileSync(keys, ' one \r\ntwo\n\n');
    const token = join(tmp.dir, 'token');
    writeFileSync(token, 'single-token-value\n');
    const read = resolveFileVariants(TABLE, parseCommand(TABLE, ['--keys-file', keys], { TOKEN_FILE: token }));
    expect(read.values.keys).toEqual(['one', 'two']);
    expect(read.values.token).toBe('single-token-value');
    expect(read.sources.token).toEqual({ from: 'env', name: `TOKEN_FILE (${token})` });
    expect(read.files).toEqual({ keys, token });

    writeFileSync(token, 'a\nb\n');
    expect(() => resolveFileVariants(TABLE, parseCommand(TABLE, ['--token-file', token], {}))).toThrow(new CommandError(`${token} (given by --token-file) holds 2 lines: it must hold one --token`));
    expect(() => resolveFileVariants(TABLE, parseCommand(TABLE, [], { PREQUAL_HOOKS_KEYS_FILE: join(tmp.dir, 'none') }))).toThrow(/cannot read .*none \(given by PREQUAL_HOOKS_KEYS_FILE\): no such file/);
    expect(() => resolveFileVariants(TABLE, parseCommand(TABLE, ['--keys', 'x', '--keys-file', keys], {}))).toThrow(UsageError);
    // Unmarked options and absent files change nothing.
    const untouched = resolveFileVariants(TABLE, parseCommand(TABLE, ['--plain', 'p', '--keys', 'x,y'], {}));
    expect(untouched.values).toMatchObject({ plain: 'p', keys: ['x', 'y'] });
    expect(untouched.files).toEqual({});
  });
});
