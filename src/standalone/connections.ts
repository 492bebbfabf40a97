// The open connections of `serve`, capped, and at the cap the connection that has delivered least
// for longest is the one closed, not the new one: a flood of connections that send their headers
// a line at a time (or nothing) cannot keep the real sender out. Who gives way follows the rules
// of receive/fair-share.ts: the heaviest other client address first (shares apply only when
// several addresses contend), else the slowest connection past its first second. A connection
// whose request has come whole and is being answered is never closed; an idle keep-alive
// connection is the first to go. A connection closed before its first request (on plain HTTP) is
// told so, 503 in the service's envelope: a client that is shut out unanswered may wait for its
// own timeout (fetch waited 10 s).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { clientAddress } from '../receive/client.js';
import { CONTENTION_GRACE_MS, DEFAULT_SLOW_BYTES_PER_SECOND } from '../receive/budget.js';
import { RecentRate, victimFor, type Holding } from '../receive/fair-share.js';

type ConnectionClosing = 'connection_evicted' | 'connection_refused';

interface Connection extends Holding {
  readonly socket: Socket;
  address: string;
  readonly held: 1;
  recentRate: number;
  evictable: boolean;
  readonly rate: RecentRate;
  /** The request being read or answered on it, if any. */
  request: IncomingMessage | undefined;
  /** Whether a request came on it before: then, without one, it is an idle keep-alive connection. */
  served: boolean;
}

export interface ConnectionsOptions {
  maxConnections: number;
  /** Count a connection against the forwarded address of its request (the proxy's X-Forwarded-For). */
  trustProxy: boolean;
  /** HTTPS: a connection closed before its handshake cannot be answered in plain text. */
  tls: boolean;
  /** A connection closed to make room, or a new one refused (nobody could give way). */
  onClosed: (reason: ConnectionClosing, client: string) => void;
  now?: () => number;
}

export interface Connections {
  /** Connections open now. */
  count(): number;
  /** Connections closed so far, by reason. */
  closed(): Readonly<Record<ConnectionClosing, number>>;
  /** Whether the connection a request came on was closed here: that request gets no answer of its own. */
  wasClosed(socket: Socket): boolean;
}

const BUSY_BODY = JSON.stringify({
  error: { code: 'BUSY', message: 'The receiver is holding as many connections as it allows, and none could give way; retry.' },
});
const BUSY_ANSWER =
  `HTTP/1.1 503 ${STATUS_CODES[503]}\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 5\r\n` +
  `Content-Length: ${Buffer.byteLength(BUSY_BODY)}\r\nConnection: close\r\n\r\n${BUSY_BODY}`;

/** The raw socket a request came on (the TLS socket's underlying TCP connection on HTTPS). */
function rawSocketOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket })._parent ?? socket;
}

/**
 * Caps `server`'s open connections (Node's own cap, `server.maxConnections`, closes the newcomer;
 * it must not be set).
 */
export function governConnections(server: Server, options: ConnectionsOptions): Connections {
  const now = options.now ?? (() => performance.now());
  const rules = { graceMs: CONTENTION_GRACE_MS, slowBytesPerSecond: DEFAULT_SLOW_BYTES_PER_SECOND };
  const open = new Map<Socket, Connection>();
  const shut = new WeakSet<Socket>();
  /** Closes a connection: before any request, on plain HTTP, with a 503 first. */
  const shutOut = (socket: Socket, served: boolean) => {
    shut.add(socket);
    if (options.tls || served || socket.destroyed) {
      socket.destroy();
      return;
    }
    socket.end(BUSY_ANSWER, () => socket.destroy());
    // A client that does not read its answer is not waited for.
    setTimeout(() => socket.destroy(), 1000).unref();
  };
  const closed: Record<ConnectionClosing, number> = { connection_evicted: 0, connection_refused: 0 };
  let heartbeat: NodeJS.Timeout | undefined;

  const close = (connection: Connection, reason: ConnectionClosing) => {
    closed[reason]++;
    open.delete(connection.socket);
    // A request half read is cut off (its body reading ends, its bytes given back); none: told 503.
    if (connection.request !== undefined) connection.socket.destroy();
    else shutOut(connection.socket, connection.served);
    options.onClosed(reason, connection.address);
  };

  server.on('connection', (socket: Socket) => {
    const at = now();
    const connection: Connection = {
      socket,
      address: socket.remoteAddress ?? '',
      held: 1,
      since: at,
      recentRate: 0,
      evictable: true,
      rate: new RecentRate(at),
      request: undefined,
      served: false,
    };
    socket.once('close', () => open.delete(socket));
    if (open.size >= options.maxConnections) {
      for (const other of open.values()) {
        other.recentRate = other.rate.rate(at, other.socket.bytesRead);
        // A request that has come whole is being answered: it stays.
        other.evictable = other.request?.complete !== true;
      }
      const victim = victimFor(open.values(), { address: connection.address, need: 1 }, at, rules);
      if (victim === undefined) {
        // Everyone is busy being answered: the newcomer waits for none of them.
        closed.connection_refused++;
        shutOut(socket, false);
        options.onClosed('connection_refused', connection.address);
        return;
      }
      close(victim, 'connection_evicted');
    }
    open.set(socket, connection);
    heartbeat ??= setInterval(() => {
      const beat = now();
      for (const each of open.values()) each.rate.tick(beat, each.socket.bytesRead);
    }, 1000).unref();
  });

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const connection = open.get(rawSocketOf(req.socket));
    if (connection === undefined) return;
    connection.request = req;
    connection.served = true;
    if (options.trustProxy) connection.address = clientAddress(req, true) ?? connection.address;
    res.once('close', () => {
      if (connection.request === req) connection.request = undefined;
    });
  });

  server.once('close', () => clearInterval(heartbeat));

  return { count: () => open.size, closed: () => ({ ...closed }), wasClosed: (socket) => shut.has(rawSocketOf(socket)) };
}
