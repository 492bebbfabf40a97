// `prequal-hooks secret --fingerprint`: the fingerprints of the secrets on standard input, the very
// ones serve logs for a secret file of the same lines, through the real process. Its refusals are
// test/integration/cli-secret.test.ts's.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { secretFingerprint } from '../../src/signature.js';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const OLD = 'whsec_fingerprint_old_6a1f93c2';
const NEW = 'whsec_fingerprint_new_0d8e47b5';

const tmp = tempDir('prequal-hooks-secret-');
afterAll(() => {
  killChildren();
  tmp.cleanup();
});

describe('prequal-hooks secret --fingerprint', () => {
  it('prints one fingerprint a secret on standard input, in order, as serve logs them for the same secret file', async () => {
    // A secret file as people write them: CRLF, blanks around a secret, an empty line.
    const lines = `${OLD}\r\n\n  ${NEW}  \n`;
    const result = await runCliProcess(['secret', '--fingerprint'], { input: lines });
    expect(result).toEqual({ code: 0, stdout: `${secretFingerprint(OLD)}\n${secretFingerprint(NEW)}\n`, stderr: '' });
    expect(result.stdout).toMatch(/^([0-9a-f]{12}\n){2}$/);

    const file = join(tmp.dir, 'secrets.txt');
    writeFileSync(file, lines, { mode: 0o600 });
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'fp.db'), '--secret-file', file]);
    const listening = await waitFor(
      () => serve.logLines().find((line) => Array.isArray(line.secretFingerprints)),
      5000,
      'the listening log line',
    );
    expect(await serve.stop()).toBe(0);
    expect(listening.secretFingerprints).toEqual(result.stdout.trimEnd().split('\n'));
  });

  it('fingerprints the generated secret that `secret` prints, piped in', async () => {
    const db = join(tmp.dir, 'generated.db');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', db]);
    expect(await serve.stop()).toBe(0);
    const shown = await runCliProcess(['secret', '--db', db]);
    expect(shown.code).toBe(0);
    const fingerprint = await runCliProcess(['secret', '--fingerprint'], { input: shown.stdout });
    expect(fingerprint).toEqual({ code: 0, stdout: `${secretFingerprint(shown.stdout.trim())}\n`, stderr: '' });
  });
});
