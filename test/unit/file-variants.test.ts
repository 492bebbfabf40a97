// The generic *-file options: marking an option in a table is all another option needs.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandError, UsageError } from '../../src/cli/args.js';
import { looseFileWarning, resolveFileVariants, withFileVariants } from '../../src/cli/file-variants.js';
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
    expect(() => resolveFileVariants(TABLE, parseCommand(TABLE, ['--token-file', token], {}))).toThrow(
      new CommandError(`${token} (given by --token-file) holds 2 lines: it must hold one --token`),
    );
    expect(() => resolveFileVariants(TABLE, parseCommand(TABLE, [], { PREQUAL_HOOKS_KEYS_FILE: join(tmp.dir, 'none') }))).toThrow(
      /cannot read .*none \(given by PREQUAL_HOOKS_KEYS_FILE\): no such file/,
    );
    expect(() => resolveFileVariants(TABLE, parseCommand(TABLE, ['--keys', 'x', '--keys-file', keys], {}))).toThrow(UsageError);
    // Unmarked options and absent files change nothing.
    const untouched = resolveFileVariants(TABLE, parseCommand(TABLE, ['--plain', 'p', '--keys', 'x,y'], {}));
    expect(untouched.values).toMatchObject({ plain: 'p', keys: ['x', 'y'] });
    expect(untouched.files).toEqual({});
  });
});

describe('looseFileWarning', () => {
  it('names the file, what gave it and its mode when group or others can read or change it; nothing when owner-only or absent', () => {
    const path = join(tmp.dir, 'held');
    writeFileSync(path, 'the-secret-itself\n');
    const file = { path, from: 'PREQUAL_HOOKS_X_FILE' };
    const at = (mode: number) => (chmodSync(path, mode), looseFileWarning(file, 'the x'));
    expect(at(0o644)).toBe(
      `${path} (given by PREQUAL_HOOKS_X_FILE) can be read by other users (mode 644); it holds the x: chmod 600 ${path}`,
    );
    expect(at(0o604)).toMatch(/can be read by other users \(mode 604\)/);
    expect(at(0o620)).toMatch(/can be changed by other users \(mode 620\)/);
    for (const mode of [0o600, 0o400, 0o700, 0o711]) expect(at(mode), mode.toString(8)).toBeUndefined();
    expect(looseFileWarning({ path: join(tmp.dir, 'absent'), from: '--x-file' }, 'the x')).toBeUndefined();
    expect(at(0o666)).not.toContain('the-secret-itself');
  });
});
