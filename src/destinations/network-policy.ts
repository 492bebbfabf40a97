// Where destinations may connect (docs/destinations.md, "Network policy"): never to a link-local or
// cloud metadata address (169.254.0.0/16, fe80::/10, fd00:ec2::254), in whatever spelling the URL
// gives it (2852039166, 0xA9FEA9FE, [::ffff:169.254.169.254]) or whatever name resolves there.
// The address checked is the one connected to: a literal before connecting, a name as it resolves
// (the `lookup` given to the socket), so a name that resolves there now and elsewhere when it was
// added is refused too. Ranges may be added (`deny`), and holes opened in any of them (`allow`).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ConfigurationError } from '../errors.js';

/** Link-local (IPv4 and IPv6), where clouds answer for their metadata, and AWS's IPv6 metadata address. */
export const DEFAULT_DENIED_RANGES: readonly string[] = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128'];

/** Ranges added to the denied ones, and holes opened in them: CIDR ranges (`10.0.0.0/8`, `fd00::/8`, or one address). */
export interface NetworkRules {
  /** Ranges destinations never connect to, beside the link-local and cloud metadata ones. */
  deny?: readonly string[];
  /** Holes opened in the denied ranges, the default ones too. */
  allow?: readonly string[];
}

export interface NetworkPolicy {
  /** Why a connection to `address` (an IP address, as connected to) is refused; undefined when it is not. */
  refusal(address: string): string | undefined;
  /**
   * Why a URL's host is refused as written: an address, in any spelling a URL or the resolver
   * reads; undefined for a name (checked when it resolves, by `lookup`) or an address allowed.
   */
  hostRefusal(hostname: string): string | undefined;
  /** `dns.lookup`, failing with DeniedAddressError when the name resolves to a refused address. */
  lookup: LookupFunction;
}

/** A connection the network policy refused: a delivery failure that says why. */
export class DeniedAddressError extends Error {
  override name = 'DeniedAddressError';
  constructor(reason: string) {
    super(`refused by the network policy: ${reason}`);
  }
}

interface Range {
  text: string;
  list: BlockList;
}

/** One CIDR range (an address alone is one address); `name` says where it was given, for the error. */
function rangeOf(text: string, name: string): Range {
  const match = /^\[?([^/\]]+)\]?(?:\/(\d{1,3}))?$/.exec(text.trim());
  const address = match?.[1] ?? '';
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const prefix = match?.[2] === undefined ? bits : Number(match[2]);
  if (family === 0 || prefix > bits)
    throw new ConfigurationError(`${name} must be CIDR ranges such as 10.0.0.0/8 or fd00::/8 (comma-separated), got "${text}"`);
  const list = new BlockList();
  list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return { text: `${address}/${prefix}`, list };
}

/** The ranges of `texts`, each checked; `name` names where they were given in the error. */
export function parseRanges(texts: readonly string[], name: string): Range[] {
  return texts.map((text) => rangeOf(text, name));
}

const contains = (range: Range, address: string): boolean => range.list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');

/** The policy of the default denied ranges, `rules.deny` added, `rules.allow` opened in them. */
export function networkPolicy(rules: NetworkRules = {}): NetworkPolicy {
  const byDefault = parseRanges(DEFAULT_DENIED_RANGES, 'the default denied ranges');
  const denied = parseRanges(rules.deny ?? [], 'deny');
  const allowed = parseRanges(rules.allow ?? [], 'allow');

  /** The range that refuses `address`, and why it is refused; undefined when none does, or a hole is open. */
  const refusingRange = (address: string): string | undefined => {
    if (allowed.some((range) => contains(range, address))) return undefined;
    const standard = byDefault.find((range) => contains(range, address));
    if (standard !== undefined) return `${standard.text}: link-local and cloud metadata addresses are never connected to`;
    const added = denied.find((range) => contains(range, address));
    return added === undefined ? undefined : `${added.text}, a range denied to destinations`;
  };

  // An IPv6 zone (fe80::1%eth0) names an interface, not another address.
  const withoutZone = (address: string) => address.replace(/%.*$/, '');

  const refusal = (given: string): string | undefined => {
    const address = withoutZone(given);
    if (isIP(address) === 0) return `${given} is not an IP address`;
    const range = refusingRange(address);
    return range === undefined ? undefined : `${given} is in ${range}`;
  };

  const hostRefusal = (hostname: string): string | undefined => {
    const bare = hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(bare) !== 0) return refusal(bare);
    // Another spelling of an IPv4 address (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376): as an
    // http(s) URL reads it, and as the resolver reads the host of a redis:// one.
    let normal: string;
    try {
      normal = new URL(`http://${bare}`).hostname;
    } catch {
      return undefined;
    }
    const range = isIP(normal) === 4 ? refusingRange(normal) : undefined;
    return range === undefined ? undefined : `${bare} is ${normal}, which is in ${range}`;
  };

  const lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error !== null) return callback(error, '');
      for (const { address } of addresses) {
        const bare = withoutZone(address);
        const range = isIP(bare) === 0 ? undefined : refusingRange(bare);
        if (isIP(bare) === 0 || range !== undefined)
          return callback(
            new DeniedAddressError(
              `${hostname} resolves to ${address}, ${range === undefined ? 'not an IP address' : `which is in ${range}`}`,
            ),
            '',
          );
      }
      if (options.all === true) return callback(null, addresses);
      const [first] = addresses;
      callback(null, first?.address ?? '', first?.family);
    });
  };

  return { refusal, hostRefusal, lookup };
}
