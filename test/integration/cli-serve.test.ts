// `prequal-hooks serve` refusing what it is given, in this process: exit 2, one line, nothing
// created. serve running: test/e2e/cli-serve.test.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

const OLD_SECRET = 'whsec_serve_old_6c1f9a';

describe('prequal-hooks serve', () => {
  const tmp = tempDir('prequal-hooks-serve-');
  afterAll(() => tmp.cleanup());

  it('refuses --allow-unsigned with a secret (flag or environment), and a bad --port, with exit 2 and one line', async () => {
    const db = join(tmp.dir, 'refused.db');
    const [withFlag, withEnv, badPort] = await Promise.all([
      runCli(['serve', '--db', db, '--allow-unsigned', '--secret', OLD_SECRET]),
      runCli(['serve', '--db', db, '--allow-unsigned'], { env: { PREQUAL_HOOKS_SECRET: OLD_SECRET } }),
      runCli(['serve', '--db', db, '--port', 'abc']),
    ]);
    for (const result of [withFlag, withEnv, badPort]) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(withFlag.stderr).toContain('--allow-unsigned');
    expect(badPort.stderr).toContain('--port');
    expect(badPort.stderr).toContain('"abc"');
    expect(existsSync(db)).toBe(false);
  });
});
