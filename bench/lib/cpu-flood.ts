// Floods that spend a receiver's CPU rather than hold its resources: one-byte chunks, pipelined bad
// signatures, and 1 MiB bodies with bad signatures from 49 addresses. The attacker runs in a thread
// of its own, so that the sender's timings are taken on an event loop it does not slow. Used by the
// flood bench and by the e2e tests of who still gets through.
import { Worker } from 'node:worker_threads';

export interface CpuFloodOptions {
  url: string;
  /**
   * chunked: a body of `bodyBytes` in chunked framing, one byte a chunk, written as fast as the
   * socket takes it; pipelined: `requests` small POSTs written back to back on one connection,
   * never waiting for an answer; large: bodies of `bodyBytes` sent whole, one after another on a
   * kept-alive connection. Each signed with a signature that cannot verify.
   */
  shape: 'chunked' | 'pipelined' | 'large';
  connections: number;
  /** Local addresses, one connection after another. */
  from: readonly string[];
  /** chunked and large: the body's size. Default 1 MiB. */
  bodyBytes?: number;
  /** pipelined: requests written on each connection. Default 20,000. */
  requests?: number;
}

export interface CpuFloodStats {
  /** Connections opened, reconnections included. */
  opened: number;
  /** Status lines read, by status. */
  answers: Record<string, number>;
  /** Connections closed before any answer was read. */
  unanswered: number;
}

export interface CpuFlood {
  stats(): CpuFloodStats;
  /** Stops the attacker's thread (its connections close with it). */
  stop(): Promise<CpuFloodStats>;
}

/**
 * The attacker, run as the source of a worker thread (`eval`, CommonJS): it names no import of its
 * module, only what `load` (the worker's `require`) gives. Each connection opens again as soon as
 * it is closed.
 */
function attacker(load: NodeJS.Require, options: Omit<CpuFloodOptions, 'from'> & { from: string[] }): void {
  const { connect } = load('node:net') as typeof import('node:net');
  const { parentPort } = load('node:worker_threads') as typeof import('node:worker_threads');
  const { url, shape, connections, from, bodyBytes = 1024 * 1024, requests = 20_000 } = options;
  const { hostname, port, pathname } = new URL(url);
  const head = (extra: string) =>
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
    `X-Service-Signature: sha256=${'0'.repeat(64)}\r\n${extra}\r\n`;
  const parts: Buffer[] = [];
  if (shape === 'chunked') {
    // 16 KiB of one-byte chunks a write: cheap for the attacker, a chunk a callback for a receiver that reads them one by one.
    const perWrite = Math.floor((16 * 1024) / 6);
    const piece = Buffer.from('1\r\nx\r\n'.repeat(perWrite));
    parts.push(Buffer.from(head('Transfer-Encoding: chunked\r\n')));
    for (let sent = 0; sent < bodyBytes; sent += perWrite) parts.push(piece);
    parts.push(Buffer.from('0\r\n\r\n'));
  } else if (shape === 'pipelined') {
    const body = '{"event":"candidate.added","timestamp":"2026-11-20T10:00:00Z","d":1}';
    const batch = Buffer.from((head(`Content-Length: ${Buffer.byteLength(body)}\r\n`) + body).repeat(500));
    for (let written = 0; written < requests; written += 500) parts.push(batch);
  } else {
    parts.push(Buffer.concat([Buffer.from(head(`Content-Length: ${bodyBytes}\r\n`)), Buffer.alloc(bodyBytes, 0x20)]));
  }
  const stats: CpuFloodStats = { opened: 0, answers: {}, unanswered: 0 };
  let stopped = false;
  const open = (slot: number) => {
    if (stopped) return;
    const socket = connect({ host: hostname, port: Number(port), ...(from.length > 0 && { localAddress: from[slot % from.length] }) });
    stats.opened++;
    let next = 0;
    let answered = 0;
    const write = (): void => {
      while (next < parts.length && !socket.destroyed) if (!socket.write(parts[next++]!)) return void socket.once('drain', write);
    };
    socket.on('connect', write);
    socket.on('data', (chunk: Buffer) => {
      for (const match of chunk.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3})/g)) {
        stats.answers[match[1]!] = (stats.answers[match[1]!] ?? 0) + 1;
        answered++;
        // large: the next body on the same connection once the last is answered.
        if (shape === 'large') {
          next = 0;
          write();
        }
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (answered === 0) stats.unanswered++;
      if (!stopped) setImmediate(() => open(slot));
    });
  };
  for (let slot = 0; slot < connections; slot++) open(slot);
  const report = setInterval(() => parentPort!.postMessage(stats), 250);
  parentPort!.on('message', () => {
    stopped = true;
    clearInterval(report);
    parentPort!.postMessage(stats);
    process.exit(0);
  });
}

export function startCpuFlood(options: CpuFloodOptions): CpuFlood {
  const worker = new Worker(`(${attacker.toString()})(require, require('node:worker_threads').workerData)`, {
    eval: true,
    workerData: { ...options, from: [...options.from] },
  });
  let last: CpuFloodStats = { opened: 0, answers: {}, unanswered: 0 };
  worker.on('message', (stats: CpuFloodStats) => (last = stats));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    stats: () => last,
    async stop() {
      worker.postMessage('stop');
      await exited;
      return last;
    },
  };
}

/** n loopback addresses from 127.0.0.2 on (127.0.0.1 is the sender's), at most 253. */
function loopbackAddresses(n: number): string[] {
  return Array.from({ length: Math.min(n, 253) }, (_, i) => `127.0.0.${i + 2}`);
}

export interface CpuFloodShape {
  name: string;
  flood: Omit<CpuFloodOptions, 'url'>;
}

/** The three shapes that spent the sender's 5-second budget on 0.5.0 (docs/security.md, "Limits"). */
export function cpuFloodShapes(): CpuFloodShape[] {
  return [
    {
      name: 'chunked bodies in 1-byte chunks, bad signature, 8 connections from 8 addresses',
      flood: { shape: 'chunked', connections: 8, from: loopbackAddresses(8) },
    },
    {
      name: 'pipelined POSTs with a bad signature, 20,000 a connection, 8 connections from 8 addresses',
      flood: { shape: 'pipelined', connections: 8, from: loopbackAddresses(8) },
    },
    {
      name: '1 MiB bodies with a bad signature, back to back, from 49 addresses',
      flood: { shape: 'large', connections: 49, from: loopbackAddresses(49) },
    },
  ];
}
