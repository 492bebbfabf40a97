// A throw-away nats-server with JetStream for a test file (Debian's package): on a free loopback
// port, its store in a temporary folder, stopped with the file. Missing, it skips the tests that
// need it, or fails them under CI=true (test/support/needs.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable, needs } from './needs.js';
import { freePort } from './servers.js';
import { waitFor } from './wait-for.js';

const NATS = findExecutable(['nats-server'], { override: process.env.NATS_SERVER_PATH, alsoIn: ['/usr/sbin', '/usr/bin'] });

/** Whether nats-server is here (else skipped, or a failure under CI=true). */
export function hasNats(): boolean {
  return needs('nats-server', NATS !== undefined, {
    install: 'apt-get install -y --no-install-recommends nats-server (or set NATS_SERVER_PATH)',
    untested: 'the NATS JetStream destination',
  });
}

export interface NatsUnderTest {
  /** `nats://[user:password@]127.0.0.1:<port>` (`tls://localhost:<port>` with `tls`). */
  url: string;
  port: number;
  /** Every byte the server's JetStream holds on disk, read as latin1 text: to look for what must be gone. */
  storedBytes(): string;
  stop(): Promise<void>;
}

/**
 * Starts a nats-server with JetStream; resolves once it listens. `user` and `password` to require
 * them; `tls` (PEM files) to require TLS, and a client certificate when `verify`; `jetstream: false`
 * for a server without it; `port` to start one again where a stopped one was.
 */
export async function startNats(
  options: {
    port?: number;
    user?: string;
    password?: string;
    jetstream?: boolean;
    tls?: { cert: string; key: string; ca?: string; verify?: boolean };
  } = {},
): Promise<NatsUnderTest> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'prequal-hooks-nats-'));
  const lines = [`listen: "127.0.0.1:${port}"`];
  if (options.jetstream !== false) lines.push(`jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`);
  if (options.user !== undefined)
    lines.push(`authorization { user: ${JSON.stringify(options.user)}, password: ${JSON.stringify(options.password ?? '')} }`);
  if (options.tls !== undefined) {
    const { cert, key, ca, verify } = options.tls;
    lines.push(
      `tls { cert_file: ${JSON.stringify(cert)}, key_file: ${JSON.stringify(key)}${ca === undefined ? '' : `, ca_file: ${JSON.stringify(ca)}`}${verify === true ? ', verify: true' : ''} }`,
    );
  }
  const config = join(dir, 'nats.conf');
  writeFileSync(config, `${lines.join('\n')}\n`, { mode: 0o600 });
  const child: ChildProcess = spawn(NATS!, ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const take = (chunk: Buffer) => (output += chunk.toString());
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  await waitFor(() => output.includes('Server is ready') || child.exitCode !== null, 10_000, 'nats-server ready');
  if (child.exitCode !== null) throw new Error(`nats-server exited: ${output}`);
  const auth = options.user === undefined ? '' : `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@`;
  return {
    url: options.tls === undefined ? `nats://${auth}127.0.0.1:${port}` : `tls://${auth}localhost:${port}`,
    port,
    storedBytes: () =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'))
        .join('\n'),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
