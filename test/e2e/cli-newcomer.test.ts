// What a newcomer hit on a fresh clone, each fixed: the words the CLI says must be true. What serve
// says as it starts; the rest in this process, test/integration/cli-newcomer.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const ROOT = new URL('../../', import.meta.url);

describe('the command line, as a newcomer meets it', () => {
  const tmp = tempDir();
  afterAll(() => {
    killChildren();
    tmp.cleanup();
  });

  it('a port in use fails before any database file or folder is created', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const folder = join(tmp.dir, 'never');
      const result = await runCliProcess(['serve', '--host', '127.0.0.1', '--port', String(port), '--db', join(folder, 'hooks.db')]);
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
});
