// Shared by the bench servers: arguments, the "listening" line the harness waits for, and a
// clean stop on SIGTERM (so that `node --cpu-prof` writes its profile).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

export interface ServerArgs {
  port: number;
  host: string;
  /** A SQLite file, or a postgres:// URL. */
  db: string | undefined;
  secret: string;
}

export function serverArgs(): ServerArgs {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      db: { type: 'string' },
      secret: { type: 'string', default: process.env.BENCH_SECRET ?? 'bench-secret' },
    },
  });
  return { port: Number(values.port), host: values.host, db: values.db, secret: values.secret };
}

/** Prints `{"listening":{"port":…}}` once the server listens: the harness reads the port from it. */
export function announce(server: Server): void {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ listening: { port, pid: process.pid } })}\n`);
}

export function stopOn(server: Server, close: () => Promise<unknown> = async () => {}): void {
  const stop = async (): Promise<void> => {
    server.close();
    server.closeAllConnections?.();
    await close();
    process.exit(0);
  };
  // A server that cannot close says why and exits 1 rather than leaving a rejection unhandled.
  const stopOrFail = () => {
    stop().catch((error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    });
  };
  process.once('SIGTERM', stopOrFail);
  process.once('SIGINT', stopOrFail);
}

/**
 * The check the hand-written receivers make, as a user writes it: `sha256=` and the hex
 * HMAC-SHA256 of the raw body, compared in constant time.
 */
export function signedWith(secret: string, body: Buffer, header: string | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice(7), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
