import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh folder for a test's SQLite file, removed by the returned cleanup. */
export function tempDir(prefix = 'prequal-hooks-'): { dir: string; dbPath: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, dbPath: join(dir, 'hooks.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Listens on an ephemeral loopback port; returns the base URL and a close function. */
export async function listen(
  listener: ((req: IncomingMessage, res: ServerResponse) => void | Promise<void>) | Server,
): Promise<{ url: string; close: () => Promise<void> }> {
  // A receiver's node handler answers every request itself and its promise never rejects.
  const server = typeof listener === 'function' ? createServer((req, res) => void listener(req, res)) : listener;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** POSTs bytes with headers and returns status, headers and the parsed JSON body. */
export async function post(url: string, body: Uint8Array | string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, body: json as any };
}

/** A loopback port free now, for a server the test starts itself (a redis-server, a nats-server). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
