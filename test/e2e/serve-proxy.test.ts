// docs/deployment.md's Caddyfile and nginx server block, run for real in front of `serve --trust-proxy`:
// HTTPS at the proxy, the webhook stored behind it, and the access log naming the address the
// proxy saw, never one the sender wrote. Each is skipped, loudly, where its proxy is not installed
// (.ci/run installs both); under CI=true, it fails instead.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleEvent, signedRequest } from '../../src/testing/index.js';
import { killChildren, startServe } from '../support/cli-process.js';
import { findExecutable, needs } from '../support/needs.js';
import { tempDir } from '../support/servers.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = 'whsec_behind_a_proxy_51e0a9c4';
const PAGE = readFileSync(fileURLToPath(new URL('../../docs/deployment.md', import.meta.url)), 'utf8');

function installed(name: string, override: string | undefined): string | undefined {
  const found = findExecutable([name], { override, alsoIn: ['/usr/sbin', '/usr/local/sbin'] });
  needs(name, found !== undefined, {
    install: `\`apt-get install -y ${name}\` (.ci/run does)`,
    untested: `docs/deployment.md's ${name} example`,
  });
  return found;
}

const CADDY = installed('caddy', process.env.CADDY_PATH);
const NGINX = installed('nginx', process.env.NGINX_PATH);

/** A fenced block of docs/deployment.md, by its language. */
function readmeBlock(language: string): string {
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(PAGE)?.[1];
  if (block === undefined) throw new Error(`docs/deployment.md has no \`\`\`${language} block`);
  return block;
}

interface Setup {
  port: number;
  upstream: number;
  cert: string;
  key: string;
  dir: string;
}

/** The Caddyfile of docs/deployment.md on this test's port and certificate, with nothing written outside the test's folder. */
function caddyfile({ port, upstream, cert, key, dir }: Setup): string {
  const block = readmeBlock('caddyfile');
  expect(block).toContain('webhooks.example.com {');
  expect(block).toContain('reverse_proxy 127.0.0.1:8787');
  const site = block
    .replace('webhooks.example.com {', `https://:${port} {\n\ttls ${cert} ${key}`)
    .replace('127.0.0.1:8787', `127.0.0.1:${upstream}`);
  return `{\n\tadmin off\n\tauto_https disable_redirects\n\tskip_install_trust\n\tstorage file_system ${join(dir, 'data')}\n}\n${site}`;
}

/** The nginx server block of docs/deployment.md on this test's port and certificate, in a configuration of its own. */
function nginxConf({ port, upstream, cert, key, dir }: Setup): string {
  const block = readmeBlock('nginx');
  for (const line of ['listen 443 ssl;', 'http://127.0.0.1:8787;', '/etc/letsencrypt/live/webhooks.example.com/fullchain.pem;'])
    expect(block).toContain(line);
  const server = block
    .replace('listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`)
    .replace('http://127.0.0.1:8787;', `http://127.0.0.1:${upstream};`)
    .replace('/etc/letsencrypt/live/webhooks.example.com/fullchain.pem;', `${cert};`)
    .replace('/etc/letsencrypt/live/webhooks.example.com/privkey.pem;', `${key};`);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `${name}_temp_path ${join(dir, name)};`).join(' ');
  // `user root` only matters (and is only allowed) when the test runs as root: workers then read what the master does.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${user}daemon off;\npid ${join(dir, 'nginx.pid')};\nerror_log ${join(dir, 'error.log')};\nevents {}\nhttp {\naccess_log off;\n${temp}\n${server}\n}\n`;
}

const PROXIES = [
  {
    name: 'Caddy',
    binary: CADDY,
    file: 'Caddyfile',
    config: caddyfile,
    args: (conf: string) => ['run', '--config', conf, '--adapter', 'caddyfile'],
  },
  {
    name: 'nginx',
    binary: NGINX,
    file: 'nginx.conf',
    config: nginxConf,
    args: (conf: string, dir: string) => ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf],
  },
];

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe.each(PROXIES)('serve behind $name (the docs/deployment.md example)', ({ name, binary, file, config, args }) => {
  const tmp = tempDir('prequal-hooks-proxy-');
  let proxy: ChildProcess | undefined;
  afterAll(async () => {
    // SIGTERM, not SIGKILL: nginx's master then ends its workers, which would outlive it.
    if (proxy !== undefined && proxy.exitCode === null && proxy.signalCode === null) {
      const exited = new Promise((resolve) => proxy!.once('exit', resolve));
      proxy.kill('SIGTERM');
      await Promise.race([exited, delay(5000)]);
      proxy.kill('SIGKILL');
    }
    killChildren();
    tmp.cleanup();
  });

  it.skipIf(binary === undefined)(
    'receives over HTTPS through the proxy, and logs the address it saw, never one the sender wrote',
    async () => {
      const dir = join(tmp.dir, name);
      mkdirSync(dir);
      const cert = join(dir, 'proxy.crt');
      const key = join(dir, 'proxy.key');
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '2',
          '-subj',
          '/CN=proxy',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
      const serve = await startServe([
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--db',
        join(dir, 'proxied.db'),
        '--secret',
        SECRET,
        '--trust-proxy',
      ]);
      const port = await freePort();
      const conf = join(dir, file);
      writeFileSync(conf, config({ port, upstream: Number(new URL(serve.baseUrl).port), cert, key, dir }));
      let output = '';
      proxy = spawn(binary!, args(conf, dir), {
        env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'xdg-data'), XDG_CONFIG_HOME: join(dir, 'xdg-config') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proxy.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      proxy.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

      const agent = new Agent({ ca: [readFileSync(cert)] });
      const post = () =>
        new Promise<number>((resolve, reject) => {
          const { body, headers } = signedRequest(sampleEvent('candidate.added', { data: { candidate_id: randomUUID() } }), {
            secret: SECRET,
          });
          // From 127.0.0.2, claiming another address: the proxy reaches serve from 127.0.0.1, so all three differ.
          const req = request(
            `https://127.0.0.1:${port}/webhooks`,
            { method: 'POST', agent, localAddress: '127.0.0.2', headers: { ...headers, 'x-forwarded-for': '203.0.113.66' } },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode!));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      // The proxy takes a moment to listen.
      let refused = '';
      const status = await waitFor(
        () =>
          post().catch((error: Error) => {
            refused = error.message;
            return undefined;
          }),
        15_000,
        `${name} to answer`,
        { everyMs: 200 },
      ).catch((error: Error) => {
        throw new Error(`${error.message}: ${refused}\n${output}`);
      });
      expect(status, output).toBe(200);
      const line = await waitFor(() => serve.logLines().find((entry) => entry.msg === 'webhook'), 5000, 'the access log line');
      // The address the proxy saw, which --trust-proxy logs instead of the proxy's own (127.0.0.1);
      // what the sender claimed is never taken.
      expect(line.client).toBe('127.0.0.2');
      agent.destroy();
      expect(await serve.stop()).toBe(0);
    },
    30_000,
  );
});
