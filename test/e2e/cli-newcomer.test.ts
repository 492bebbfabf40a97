// What a newcomer hit on a fresh clone, each fixed: the words the CLI says must be true.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { count } from '../../src/words.js';
import { killChildren, runCli, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const ROOT = new URL('../../', import.meta.url);

describe('the command line, as a newcomer meets it', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('names PORT, not --port, when the bad value came from the environment', async () => {
    const fromEnv = await runCli(['serve', '--db', join(tmp.dir, 'port.db')], { env: { PORT: 'abc' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/^prequal-hooks serve: PORT must be a whole number from 0 to 65535, got "abc"/);
    const fromFlag = await runCli(['serve', '--port', 'abc', '--db', join(tmp.dir, 'port.db')]);
    expect(fromFlag.stderr).toMatch(/--port must be a whole number/);
    expect(existsSync(join(tmp.dir, 'port.db'))).toBe(false);
  });

  it('a port in use fails before any database file or folder is created', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const folder = join(tmp.dir, 'never');
      const result = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port), '--db', join(folder, 'hooks.db')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/port is already in use/);
      expect(existsSync(folder)).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('warns about a webhook secret under 16 characters, naming its fingerprint, never the secret', async () => {
    const weak = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'weak.db'),
      '--secret',
      'hunter2',
      '--log-level',
      'warn',
    ]);
    expect(weak.stderr()).toMatch(/WARNING: a webhook secret of 7 characters \(fingerprint [0-9a-f]{12}\) is weak/);
    expect(weak.stderr() + weak.stdout()).not.toContain('hunter2');
    expect(await weak.stop()).toBe(0);
    const strong = await startServe([
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--db',
      join(tmp.dir, 'strong.db'),
      '--secret',
      'a-strong-secret-of-32-characters',
      '--log-level',
      'warn',
    ]);
    expect(strong.stderr()).not.toMatch(/WARNING/);
    expect(await strong.stop()).toBe(0);
  });

  it('says when it listens on every interface, and `npm start` keeps to this machine', async () => {
    const everywhere = await startServe([
      '--port',
      '0',
      '--host',
      '0.0.0.0',
      '--db',
      join(tmp.dir, 'all.db'),
      '--secret',
      'a-strong-secret-of-32-characters',
      '--log-level',
      'warn',
    ]);
    await waitFor(
      () => (/other machines can reach this port; --host 127\.0\.0\.1/.test(everywhere.stderr()) ? true : undefined),
      5000,
      'the every-interface notice',
    );
    expect(await everywhere.stop()).toBe(0);
    const local = await startServe(
      ['--port', '0', '--db', join(tmp.dir, 'all.db'), '--secret', 'a-strong-secret-of-32-characters', '--log-level', 'warn'],
      { PREQUAL_HOOKS_HOST: '127.0.0.1' },
    );
    expect(local.stderr()).toMatch(/listening on 127\.0\.0\.1:/);
    expect(local.stderr()).not.toMatch(/other machines/);
    expect(await local.stop()).toBe(0);
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: { start: string } };
    expect(pkg.scripts.start).toMatch(/serve --host 127\.0\.0\.1$/);
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

  it('--version is the release the CHANGELOG describes first', async () => {
    const version = (await runCli(['--version'])).stdout.trim();
    const changelog = readFileSync(new URL('CHANGELOG.md', ROOT), 'utf8');
    expect(/^## (\S+)/m.exec(changelog)?.[1]).toBe(version);
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
