// A throw-away redis-server for a test file (Debian's package): on a free loopback port, no
// persistence, stopped with the file. Missing, it skips the tests that need it, or fails them under
// CI=true (test/support/needs.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { findExecutable, needs } from './needs.js';
import { freePort } from './servers.js';
import { waitFor } from './wait-for.js';

const REDIS = findExecutable(['redis-server'], { override: process.env.REDIS_SERVER_PATH, alsoIn: ['/usr/sbin', '/usr/bin'] });

/** Whether redis-server is here (else skipped, or a failure under CI=true). */
export function hasRedis(): boolean {
  return needs('redis-server', REDIS !== undefined, {
    install: 'apt-get install -y redis-server (or set REDIS_SERVER_PATH)',
    untested: 'the Redis Streams destination',
  });
}

export interface RedisUnderTest {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts a redis-server; resolves once it answers. `port` to start one again where a stopped one
 * was (a server back after an outage), `password` to require one (`requirepass`).
 */
export async function startRedis(options: { port?: number; password?: string } = {}): Promise<RedisUnderTest & { port: number }> {
  const port = options.port ?? (await freePort());
  const auth = options.password === undefined ? [] : ['--requirepass', options.password];
  const child: ChildProcess = spawn(REDIS!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...auth], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(() => output.includes('Ready to accept connections') || child.exitCode !== null, 10_000, 'redis-server ready');
  if (child.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
  return {
    url: `redis://${options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`}127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
