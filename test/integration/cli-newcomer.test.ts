// What a newcomer hit on a fresh clone, each fixed: the words the CLI says must be true. In this
// process; what serve says as it starts is test/e2e/cli-newcomer.test.ts's.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { count } from '../../src/words.js';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

describe('the command line, as a newcomer meets it', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('names PORT, not --port, when the bad value came from the environment', async () => {
    const fromEnv = await runCli(['serve', '--db', join(tmp.dir, 'port.db')], { env: { PORT: 'abc' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/^prequal-hooks serve: PORT must be a whole number from 0 to 65535, got "abc"/);
    const fromFlag = await runCli(['serve', '--port', 'abc', '--db', join(tmp.dir, 'port.db')]);
    expect(fromFlag.stderr).toMatch(/--port must be a whole number/);
    expect(existsSync(join(tmp.dir, 'port.db'))).toBe(false);
  });

  it('help texts name both engines', async () => {
    expect((await runCli(['serve', '--help'])).stdout).toMatch(/stores it in the database \(SQLite\s+or PostgreSQL\)/);
    const replay = (await runCli(['replay', '--help'])).stdout;
    expect(replay).toMatch(/--db <path\|url>\s+SQLite file \(folder created\) or postgres:\/\/ URL/);
    for (const command of ['serve', 'replay', 'inspect', 'dead-letters', 'secret', 'rebuild', 'reconcile']) {
      expect((await runCli([command, '--help'])).stdout, command).toMatch(
        /--schema <name>\s+PostgreSQL: the schema of the tables \[PREQUAL_HOOKS_SCHEMA\]/,
      );
    }
  });

  it('counts in the right number', () => {
    expect([count(0, 'row'), count(1, 'row'), count(2, 'row'), count(1, 'candidate'), count(3, 'candidate')]).toEqual([
      '0 rows',
      '1 row',
      '2 rows',
      '1 candidate',
      '3 candidates',
    ]);
  });
});
