import type { IncomingMessage } from 'node:http';

/**
 * Who sent a request: the peer's address, or behind a trusted proxy the last X-Forwarded-For
 * entry (the proxy appends the address it saw; entries before it are the sender's own claims).
 * Never trust the header without a proxy: anyone could then write the address used.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string | undefined {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const last = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded)
      ?.split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '')
      .at(-1);
    if (last !== undefined) return last;
  }
  return req.socket?.remoteAddress;
}

/** Where an adapter finds the address a request's body is charged to (its share of the budget). */
export type ClientOf = (req: IncomingMessage) => string | undefined;

export const peerAddress: ClientOf = (req) => req.socket?.remoteAddress;
