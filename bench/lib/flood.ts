// An anonymous flood of a receiver, as an attacker runs it: many connections, each announcing a
// body just under the limit with a signature that cannot verify, sending it slowly and never its
// last byte, and opening again when the server closes it. Plus the victim's memory, read from
// /proc. Used by the flood bench and by the e2e test that bounds what such a flood can hold.
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
  socket: Socket | undefined;
  sent: number;
  blocked: boolean;
  answered: boolean;
}

const BOGUS_SIGNATURE = `sha256=${'0'.repeat(64)}`;

export function startFlood(options: FloodOptions): Flood {
  const { hostname, port, pathname } = new URL(options.url);
  // One buffer shared by every write: the attacker's own memory stays flat.
  const filler = Buffer.alloc(options.chunkBytes, 0x20);
  const head = Buffer.from(
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${options.bodyBytes}\r\nX-Service-Signature: ${BOGUS_SIGNATURE}\r\n\r\n{"event":"`,
  );
  const stats: FloodStats = { opened: 0, answers: {}, sentBytes: 0 };
  let stopped = false;
  const slots: Slot[] = Array.from({ length: options.connections }, () => ({
    socket: undefined,
    sent: 0,
    blocked: false,
    answered: false,
  }));

  const open = (slot: Slot) => {
    if (stopped) return;
    const socket = connect(Number(port), hostname);
    stats.opened++;
    Object.assign(slot, { socket, sent: head.length - head.indexOf('\r\n\r\n') - 4, blocked: false, answered: false });
    socket.setNoDelay(true);
    socket.write(head);
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
