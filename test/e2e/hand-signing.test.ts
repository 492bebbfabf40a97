// docs/security.md's "Signing by hand" block, run as written with bash, curl and openssl against a real
// `serve`: if a user following it would get a 401, so does this test.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killChildren, runCliProcess, startServe } from '../support/cli-process.js';
import { needs } from '../support/needs.js';

const missing = ['bash', 'curl', 'openssl'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const tools = needs(missing.join(', '), missing.length === 0, {
  install: `\`apt-get install -y ${missing.join(' ')}\` (.ci/run does)`,
  untested: "docs/security.md's hand-signing example",
});

describe.skipIf(!tools)("docs/security.md's hand-signing example", () => {
  afterAll(() => killChildren());

  it('signs with curl and openssl exactly as the service does: 200, and the event is projected', async () => {
    const page = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## Signing by hand'), page.indexOf('## Limits'));
    const script = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const secret = /SECRET='([^']+)'/.exec(script)![1]!;
    const db = join(mkdtempSync(join(tmpdir(), 'prequal-hand-')), 'hooks.db');
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', db, '--secret', secret, '--log-level', 'warn']);
    try {
      const written = 'http://127.0.0.1:8787/webhooks';
      expect(script).toContain(written);
      const answer = execFileSync('bash', ['-euo', 'pipefail', '-c', script.replace(written, serve.webhookUrl)], { encoding: 'utf8' });
      expect(JSON.parse(answer)).toMatchObject({ received: true, duplicate: false });

      // The same request with one byte of the secret changed is refused: the signature is checked.
      const wrong = execFileSync(
        'bash',
        ['-euo', 'pipefail', '-c', script.replace(written, serve.webhookUrl).replace(secret, `${secret}x`)],
        { encoding: 'utf8' },
      );
      expect(JSON.parse(wrong)).toMatchObject({ error: { code: 'INVALID_SIGNATURE' } });
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const inspected = await runCliProcess(['inspect', '--db', db, '--json']);
    expect(JSON.parse(inspected.stdout).credits).toMatchObject({ credits_remaining: 8.5, low_threshold: 10 });
  });
});
