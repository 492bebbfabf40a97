// `prequal-hooks serve` for the scale benchmark (bench/scale.ts): started on a database with its
// console and /metrics behind a token, timed from spawn to its first `/readyz` 200, and its pages
// timed from outside, as an operator's browser sees them.
import { setTimeout as delay } from 'node:timers/promises';
import { startServer } from './processes.js';
import { median, round } from './stats.js';
import type { FrozenBuild } from './snapshot.js';
import type { RunningServer } from './types.js';

export const SECRET = 'bench-secret-5b1f0c2e9d';
const TOKEN = 'bench-console-token-0123456789';

export interface PageTiming {
  path: string;
  status: number;
  bytes: number;
  /** The first request (cold caches), then the median and max of all. */
  firstMs: number;
  medianMs: number;
  maxMs: number;
}

/** A serve child on `db`, its console and /metrics open to TOKEN (the full token serves both); `readyMs`: spawn to the first /readyz 200. */
export async function startServe(
  code: FrozenBuild,
  db: string,
  name: string,
  nodeOptions: string[] = [],
): Promise<{ server: RunningServer; readyMs: number }> {
  const started = performance.now();
  const server = await startServer({
    name,
    command: process.execPath,
    args: [code.cli, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', db, '--secret', SECRET, '--dashboard-token', TOKEN],
    nodeOptions,
    env: { BENCH_DIST: code.dist },
    logFile: `${db}.${name}.log`,
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const response = await fetch(`${server.url}/readyz`).catch(() => undefined);
    await response?.arrayBuffer();
    if (response?.status === 200) return { server, readyMs: performance.now() - started };
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${name}: /readyz not 200 within 120 s (last ${response?.status})`);
    }
    await delay(5);
  }
}

/** `requests` GETs of `path`, one at a time, each timed to the last byte of its answer. */
export async function timePage(url: string, path: string, requests: number): Promise<PageTiming> {
  const times: number[] = [];
  let status = 0;
  let bytes = 0;
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    bytes = (await response.arrayBuffer()).byteLength;
    times.push(performance.now() - started);
    status = response.status;
  }
  return {
    path,
    status,
    bytes,
    firstMs: round(times[0], 1)!,
    medianMs: round(median(times), 1)!,
    maxMs: round(Math.max(...times), 1)!,
  };
}
