// close() while the store is still opening in the background: nothing of the open outlives it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const APP = fileURLToPath(new URL('../support/close-opening-app.mjs', import.meta.url));

/** A port nothing listens on: connections to it are refused at once. */
async function refusingPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('closing a receiver whose PostgreSQL refuses connections', () => {
  it('stops the background retry: the process exits promptly after close(), and ready() says CLOSED', async () => {
    const url = `postgres://hooks@127.0.0.1:${await refusingPort()}/hooks`;
    // 3.9 s: past the retries at 0, 0.25, 0.75, 1.75 and 3.75 s, into the 4 s wait before the next.
    const child = spawn(process.execPath, [APP, url, '3900'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let closedAt: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (closedAt === undefined && stdout.includes('closed after')) closedAt = performance.now();
    });
    const exited = await new Promise<number>((resolve) => {
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('exit', () => {
        clearTimeout(killer);
        resolve(performance.now());
      });
    });
    expect(closedAt, `close() never resolved: ${stdout}`).toBeDefined();
    expect(stdout).toContain('ready: CLOSED');
    // A deadline, not a measurement: before the fix the process lived on until the next retry (~4 s).
    expect(exited - closedAt!).toBeLessThan(2000);
  }, 20_000);
});
