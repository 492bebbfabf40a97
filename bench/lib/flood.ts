// An anonymous flood of a receiver, as an attacker runs it: many connections, each announcing a
// body just under the limit with a signature that cannot verify, sending it slowly and never its
// last byte (or, in the `headers` shape, sending its headers a line at a time, never the blank
// line that ends them), and opening again when the server closes it; from one address or spread
// over several (127.x). Plus the victim's memory, read from /proc. Used by the flood bench and by
// the e2e tests of what such a flood can hold and whom it can keep out.
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';

export interface FloodOptions {
  /** The webhook URL (http:// only: loopback). */
  url: string;
  connections: number;
  /** The Content-Length announced; all but the last byte is sent. */
  bodyBytes: number;
  /** Bytes written on each connection at each tick. */
  chunkBytes: number;
  tickMs: number;
  /** How long a closed slot waits before it connects again. */
  reconnectMs: number;
  /** `body` (default): a body trickled after whole headers; `headers`: header lines trickled, one a tick. */
  shape?: 'body' | 'headers';
  /** Body bytes sent at once when a connection opens (then `chunkBytes` a tick). Default 0. */
  firstBytes?: number;
  /** Local addresses to connect from, one slot after another (loopback: 127.0.0.2, ...). Default: the system's choice. */
  from?: readonly string[];
}

export interface FloodStats {
  /** Connections opened, reconnections included. */
  opened: number;
  /** Answers read, by HTTP status. */
  answers: Record<string, number>;
  /** Body bytes written in all. */
  sentBytes: number;
}

export interface Flood {
  stats(): FloodStats;
  /** Ends every connection and stops opening new ones. */
  stop(): FloodStats;
}

interface Slot {
  from: string | undefined;
  socket: Socket | undefined;
  sent: number;
  blocked: boolean;
  answered: boolean;
}

const BOGUS_SIGNATURE = `sha256=${'0'.repeat(64)}`;

export function startFlood(options: FloodOptions): Flood {
  const { hostname, port, pathname } = new URL(options.url);
  // One buffer shared by every write: the attacker's own memory stays flat.
  const filler = Buffer.alloc(Math.max(options.chunkBytes, options.firstBytes ?? 0), 0x20);
  const headersOnly = options.shape === 'headers';
  const head = Buffer.from(
    headersOnly
      ? `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n`
      : `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${options.bodyBytes}\r\nX-Service-Signature: ${BOGUS_SIGNATURE}\r\n\r\n{"event":"`,
  );
  /** One header line a tick, short enough that a minute of them stays under Node's 16 KiB of headers. */
  const headerLine = Buffer.from('X-Slow: 1\r\n');
  const stats: FloodStats = { opened: 0, answers: {}, sentBytes: 0 };
  let stopped = false;
  const slots: Slot[] = Array.from({ length: options.connections }, (_, i) => ({
    from: options.from === undefined || options.from.length === 0 ? undefined : options.from[i % options.from.length],
    socket: undefined,
    sent: 0,
    blocked: false,
    answered: false,
  }));

  const open = (slot: Slot) => {
    if (stopped) return;
    const socket = connect({ port: Number(port), host: hostname, ...(slot.from !== undefined && { localAddress: slot.from }) });
    stats.opened++;
    Object.assign(slot, { socket, sent: headersOnly ? 0 : head.length - head.indexOf('\r\n\r\n') - 4, blocked: false, answered: false });
    socket.setNoDelay(true);
    socket.write(head);
    const first = headersOnly ? 0 : Math.min(options.firstBytes ?? 0, options.bodyBytes - 1 - slot.sent);
    if (first > 0) {
      slot.sent += first;
      stats.sentBytes += first;
      if (!socket.write(filler.subarray(0, first))) slot.blocked = true;
    }
    socket.on('drain', () => (slot.blocked = false));
    socket.on('data', (chunk: Buffer) => {
      if (slot.answered) return;
      slot.answered = true;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'other';
      stats.answers[status] = (stats.answers[status] ?? 0) + 1;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      slot.socket = undefined;
      if (!stopped) setTimeout(() => open(slot), options.reconnectMs);
    });
  };

  const tick = () => {
    for (const slot of slots) {
      const { socket } = slot;
      if (socket === undefined || slot.blocked || slot.answered || socket.destroyed) continue;
      if (headersOnly) {
        if (!socket.write(headerLine)) slot.blocked = true;
        continue;
      }
      const size = Math.min(options.chunkBytes, options.bodyBytes - 1 - slot.sent);
      if (size <= 0) continue;
      slot.sent += size;
      stats.sentBytes += size;
      if (!socket.write(filler.subarray(0, size))) slot.blocked = true;
    }
  };

  slots.forEach((slot, i) => setTimeout(() => open(slot), (i * options.tickMs) / options.connections));
  const ticker = setInterval(tick, options.tickMs);
  return {
    stats: () => ({ ...stats, answers: { ...stats.answers } }),
    stop() {
      stopped = true;
      clearInterval(ticker);
      for (const slot of slots) slot.socket?.destroy();
      return { ...stats, answers: { ...stats.answers } };
    },
  };
}

/** A process's resident memory now and at its peak (VmRSS, VmHWM), in MB. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

export interface SentDelivery {
  /** The HTTP status, or 0 when the connection failed or closed unanswered. */
  status: number;
  ms: number;
}

/**
 * One delivery as the service sends it: a new connection (from `from`, when given), the whole
 * signed request at once, timed to its answer; 0 for a connection closed unanswered.
 */
export async function deliverFrom(url: string, body: string, headers: Record<string, string>, from?: string): Promise<SentDelivery> {
  const { request } = await import('node:http');
  const started = performance.now();
  return await new Promise<SentDelivery>((resolve) => {
    const done = (status: number) => resolve({ status, ms: performance.now() - started });
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-length': Buffer.byteLength(body), connection: 'close' },
      ...(from !== undefined && { localAddress: from }),
      timeout: 10_000,
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', () => done(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => done(0));
    req.end(body);
  });
}

/** Eight loopback addresses a flood is spread over; the sender sends from 127.0.0.1. */
const SPREAD = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
export const SENDER_ADDRESS = '127.0.0.1';

export interface FloodShape {
  name: string;
  /** The flood, but for the URL: the default account's path, or an account's with `account`. */
  flood: Omit<FloodOptions, 'url'>;
  account?: boolean;
}

const MIB = 1024 * 1024;

/**
 * The ways anonymous clients try to keep the sender out, against serve's defaults (1 MiB bodies,
 * a 64 MiB budget, 1,024 connections): each must leave the sender's deliveries answered 2xx.
 */
export function fairnessShapes(): FloodShape[] {
  // Announced at the limit exactly: 64 of them declared the whole budget when a declared length was claimed.
  const trickle = { bodyBytes: MIB, chunkBytes: 1, tickMs: 1000, reconnectMs: 250 } as const;
  const headers = { shape: 'headers', bodyBytes: 0, chunkBytes: 0, tickMs: 1000, reconnectMs: 250 } as const;
  return [
    { name: 'bodies announced at 1 MiB, a byte a second, one address', flood: { ...trickle, connections: 128, from: ['127.0.0.2'] } },
    { name: 'bodies announced at 1 MiB, a byte a second, eight addresses', flood: { ...trickle, connections: 128, from: SPREAD } },
    {
      name: "bodies sent whole but their last byte, over the budget, the sender's address",
      flood: { ...trickle, connections: 80, firstBytes: MIB, chunkBytes: 0, from: [SENDER_ADDRESS] },
    },
    {
      name: 'bodies sent whole but their last byte, over the budget, eight addresses',
      flood: { ...trickle, connections: 80, firstBytes: MIB, chunkBytes: 0, from: SPREAD },
    },
    { name: 'headers a line a second, over the connection cap, eight addresses', flood: { ...headers, connections: 1100, from: SPREAD } },
    {
      name: "headers a line a second, over the connection cap, the sender's address",
      flood: { ...headers, connections: 1100, from: [SENDER_ADDRESS] },
    },
    {
      name: "an account's path: bodies announced at 1 MiB, a byte a second, eight addresses",
      flood: { ...trickle, connections: 128, from: SPREAD },
      account: true,
    },
  ];
}
