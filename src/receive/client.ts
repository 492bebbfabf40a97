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

/**
 * The key a client's shares and failures are counted under: an IPv4 address as is (an IPv4-mapped
 * IPv6 one as its IPv4 form), an IPv6 address by its /64 prefix, which one subscriber holds whole.
 */
export function clientKey(address: string): string {
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1]!;
  const [head = '', tail] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
