// The real `prequal-hooks` bin, as users run it: what only a process shows. Its exit codes (the
// routing and error mapping they come from are tested in this process, test/integration/cli-*.test.ts),
// --version and --help, and the database found in the working folder. Signals, crashes and
// reloads: cli-serve, crash and serve-tls.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, killChildren, runCliProcess } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';

const ROOT = new URL('../../', import.meta.url);

// The tests are independent: run concurrently, their processes share the cores.
describe.concurrent('the prequal-hooks process', () => {
  const tmp = tempDir('prequal-hooks-bin-');
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('exits 0 for --help and --version, 2 for no command, an unknown one or a bad flag, 1 for a failed command', async () => {
    const [help, version, none, unknown, badFlag, failed] = await Promise.all([
      runCliProcess(['--help']),
      runCliProcess(['--version']),
      runCliProcess([]),
      runCliProcess(['frobnicate']),
      runCliProcess(['inspect', '--colour']),
      runCliProcess(['rebuild', '--db', join(tmp.dir, 'nope.db')]),
    ]);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: prequal-hooks <command>/);
    expect(version).toMatchObject({ code: 0, stderr: '' });
    expect(none.code).toBe(2);
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: 'prequal-hooks: unknown command "frobnicate". Run "prequal-hooks --help".\n' });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('unknown option --colour');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^prequal-hooks rebuild: no database at .*\n$/);
  });

  it('--version is the release the CHANGELOG describes first', async () => {
    const version = (await runCliProcess(['--version'])).stdout.trim();
    const changelog = readFileSync(new URL('CHANGELOG.md', ROOT), 'utf8');
    expect(/^## (\S+)/m.exec(changelog)?.[1]).toBe(version);
  });

  it('replay uses ./data/prequal-hooks.db in the working folder when neither --db nor PREQUAL_HOOKS_DB is given', async () => {
    const cwd = join(tmp.dir, 'workdir');
    mkdirSync(cwd);
    const result = await runCliProcess(['replay', `${FIXTURES}events/campaign.created.json`], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^received 1, duplicates 0, projected 1, unknown 0, dead 0/);
    expect(existsSync(join(cwd, 'data', 'prequal-hooks.db'))).toBe(true);
  });
});
