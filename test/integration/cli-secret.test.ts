// `prequal-hooks secret --fingerprint` refusing what it cannot fingerprint, in this process (what
// serve logs for the same secrets: test/e2e/cli-secret.test.ts).
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/command-io.js';
import { tempDir } from '../support/servers.js';

const OLD = 'whsec_fingerprint_old_6a1f93c2';

const tmp = tempDir('prequal-hooks-secret-');
afterAll(() => tmp.cleanup());

describe('prequal-hooks secret --fingerprint', () => {
  it('exits 1 on an empty input, and 2 when a database is named too; never echoes a secret', async () => {
    const [empty, withDb] = await Promise.all([
      runCli(['secret', '--fingerprint'], { input: '\n  \n' }),
      runCli(['secret', '--fingerprint', '--db', join(tmp.dir, 'x.db')], { input: `${OLD}\n` }),
    ]);
    expect(empty).toMatchObject({ code: 1, stdout: '' });
    expect(empty.stderr).toMatch(/no secret on standard input/);
    expect(withDb).toMatchObject({ code: 2, stdout: '' });
    expect(withDb.stderr).toMatch(/--fingerprint reads secrets from standard input/);
    expect(withDb.stderr).not.toContain(OLD);
  });
});
