// Shared by the bench servers: arguments, the "listening" line the harness waits for, and a
// clean stop on SIGTERM (so that `node --cpu-prof` writes its profile).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** The package under test: the run's frozen copy (BENCH_DIST), or ../../dist when run by hand. */
export function distModule() {
  const dist = process.env.BENCH_DIST;
  return import(dist ? pathToFileURL(`${dist}/index.js`).href : '../../dist/index.js');
}

export function serverArgs() {
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
export function announce(server) {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ listening: { port, pid: process.pid } })}\n`);
}

export function stopOn(server, close = async () => {}) {
  const stop = async () => {
    server.close();
    server.closeAllConnections?.();
    await close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/**
 * The check the hand-written receivers make, as a user writes it: `sha256=` and the hex
 * HMAC-SHA256 of the raw body, compared in constant time.
 */
export function signedWith(secret, body, header) {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice(7), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
