// The command line's usage, in this process through src/cli/run.ts: each command's help, the
// general help, and unknown commands and flags. test/e2e/cli-bin.test.ts checks the same exit codes
// on the real bin.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/command-io.js';

const COMMANDS = ['serve', 'replay', 'send', 'inspect', 'dead-letters', 'secret', 'sandbox'];

describe('prequal-hooks usage', () => {
  it("prints each command's help on stdout with exit 0 (--help, -h, and for dead-letters reprocess)", async () => {
    const [short, reprocess, ...results] = await Promise.all([
      runCli(['send', '-h']),
      runCli(['dead-letters', 'reprocess', '--help']),
      ...COMMANDS.map((command) => runCli([command, '--help'])),
    ]);
    results.forEach((result, i) => {
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(new RegExp(`^Usage: prequal-hooks ${COMMANDS[i]!}\\b`));
    });
    expect(short).toEqual(results[COMMANDS.indexOf('send')]);
    expect(reprocess.code).toBe(0);
    expect(reprocess.stdout).toContain('prequal-hooks dead-letters reprocess (--all | <inbox id>...)');
  });

  it('lists every command in the general help, and refuses unknown commands and flags with exit 2', async () => {
    const [help, none, unknown, badFlag] = await Promise.all([
      runCli(['--help']),
      runCli([]),
      runCli(['frobnicate']),
      runCli(['inspect', '--colour']),
    ]);
    expect(help.code).toBe(0);
    for (const command of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(none.code).toBe(2);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('prequal-hooks: unknown command "frobnicate". Run "prequal-hooks --help".\n');
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(badFlag.stderr).toContain('unknown option --colour');
  });
});
