// Connections refused before a byte of them is read: under contention, a client address over its
// budget of failed requests (admission.ts) is answered 429 at its connection. Node's HTTP parser
// reads a connection 64 KiB at a time and parses all of it (a read of pipelined requests is a few
// hundred of them) before any handler can refuse the first; here nothing is read at all.
import { STATUS_CODES } from 'node:http';
import type { Server, Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import { rawAnswer } from './answer.js';
import type { Admission } from './admission.js';
import { tooManyFailures } from './intake.js';

/** Options of `screenConnections`. */
export interface ConnectionScreen {
  /** Told of each connection refused, with the client's address. */
  onRefused?: (address: string) => void;
}

/**
 * Screens the new connections of `server` (a node:http or node:https server whose peers are the
 * clients themselves, not a proxy): a connection whose address `admission` refuses is answered
 * 429 with `Retry-After` and closed, unread.
 */
export function screenConnections(server: Server, admission: Admission, options: ConnectionScreen = {}): void {
  // On TLS, a refused connection is closed: it could not read a plain-text answer.
  const tls = server instanceof TlsServer;
  // After Node's own connection listener: pausing then stops the read it has just started.
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const seconds = admission.refusesConnection(address);
    if (seconds === undefined) return;
    socket.pause();
    options.onRefused?.(address);
    if (tls) {
      socket.destroy();
      return;
    }
    socket.end(answerIn(seconds), () => socket.destroy());
    // A client that does not read its answer is not waited for.
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}

/** The raw 429s, by their Retry-After (a few distinct values): made once each, not once a connection. */
const answers = new Map<number, string>();

function answerIn(seconds: number): string {
  let answer = answers.get(seconds);
  if (answer === undefined) answers.set(seconds, (answer = rawAnswer(tooManyFailures(seconds), STATUS_CODES[429]!)));
  return answer;
}
