// The README's Caddyfile, run for real in front of `serve --trust-proxy`: HTTPS at Caddy, the
// webhook stored behind it, and the access log naming the address Caddy saw, not one the sender
// claims. Skipped, loudly, where Caddy is not installed (.ci/run installs it).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe, waitFor } from '../support/cli-process.js';
import { tempDir } from '../support/servers.js';

const CADDY = [process.env.CADDY_PATH, '/usr/bin/caddy', '/usr/local/bin/caddy'].find((path) => path !== undefined && path !== '' && existsSync(path));
if (CADDY === undefined) {
  process.stderr.write(
    '\n' + '!'.repeat(78) + '\n!!! NO CADDY FOUND (/usr/bin/caddy, or set CADDY_PATH): the README\'s reverse-proxy example is NOT TESTED.\n' +
      '!!! Install it with `apt-get install -y caddy` (.ci/run does).\n' + '!'.repeat(78) + '\n',
  );
}

const SECRET = 'whsec_behind_caddy_51e0a9c4';
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The README's Caddyfile, pointed at this test's ports and certificate instead of a real domain. */
function readmeCaddyfile(port: number, upstream: number, cert: string, key: string, storage: string): string {
  const block = /```caddyfile\n([\s\S]*?)```/.exec(readFileSync(README, 'utf8'))?.[1];
  if (block === undefined) throw new Error('the README has no ```caddyfile block');
  expect(block).toContain('webhooks.example.com {');
  expect(block).toContain('reverse_proxy 127.0.0.1:8787');
  const site = block.replace('webhooks.example.com {', `https://:${port} {\n\ttls ${cert} ${key}`).replace('127.0.0.1:8787', `127.0.0.1:${upstream}`);
  // No admin endpoint, no redirect server on port 80, nothing written outside the test's folder.
  return `{\n\tadmin off\n\tauto_https disable_redirects\n\tskip_install_trust\n\tstorage file_system ${storage}\n}\n${site}`;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe.skipIf(CADDY === undefined)('serve behind Caddy (the README example)', () => {
  const tmp = tempDir('prequal-hooks-caddy-');
  let caddy: ChildProcess | undefined;
  afterAll(() => {
    caddy?.kill('SIGKILL');
    killChildren();
    tmp.cleanup();
  });

  it('receives over HTTPS through Caddy, and logs the address Caddy saw, never one the sender wrote', async () => {
    const cert = join(tmp.dir, 'caddy.crt');
    const key = join(tmp.dir, 'caddy.key');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=caddy', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--db', join(tmp.dir, 'proxied.db'), '--secret', SECRET, '--trust-proxy']);
    const port = await freePort();
    const caddyfile = join(tmp.dir, 'Caddyfile');
    writeFileSync(caddyfile, readmeCaddyfile(port, Number(new URL(serve.baseUrl).port), cert, key, join(tmp.dir, 'caddy-data')));
    let caddyOutput = '';
    caddy = spawn(CADDY!, ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
      env: { ...process.env, HOME: tmp.dir, XDG_DATA_HOME: join(tmp.dir, 'xdg-data'), XDG_CONFIG_HOME: join(tmp.dir, 'xdg-config') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    caddy.stdout!.on('data', (chunk: Buffer) => (caddyOutput += chunk.toString()));
    caddy.stderr!.on('data', (chunk: Buffer) => (caddyOutput += chunk.toString()));

    const agent = new Agent({ ca: [readFileSync(cert)] });
    const post = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const { body, headers: signed } = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: randomUUID() } }), { secret: SECRET });
        // From 127.0.0.2: Caddy itself reaches serve from 127.0.0.1, so the two addresses differ.
        const req = request(`https://127.0.0.1:${port}/webhooks`, { method: 'POST', agent, localAddress: '127.0.0.2', headers: { ...signed, ...headers } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(body);
      });
    // Caddy takes a moment to listen.
    let status: number | undefined;
    const deadline = Date.now() + 15_000;
    while (status === undefined) {
      status = await post({ 'x-forwarded-for': '203.0.113.66' }).catch((error: Error) => {
        if (Date.now() > deadline) throw new Error(`Caddy did not answer: ${error.message}\n${caddyOutput}`);
        return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 200));
      });
    }
    expect(status).toBe(200);
    const line = await waitFor(() => serve.logLines().find((entry) => entry.msg === 'webhook'), 5000, 'the access log line');
    // Caddy does not trust its client's X-Forwarded-For: it sends the address it saw, which
    // --trust-proxy logs instead of Caddy's own (127.0.0.1).
    expect(line.client).toBe('127.0.0.2');
    agent.destroy();
    expect(await serve.stop()).toBe(0);
  }, 30_000);
});
