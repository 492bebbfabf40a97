// The network policy of destinations (src/destinations/network-policy.ts), its pure part: which
// addresses it refuses, in which spellings, and the holes `allow` opens. The address as connected
// to (a name resolved) is tested against real sockets in test/integration/destination-network.test.ts.
import { describe, expect, it } from 'vitest';
import { networkPolicy, parseRanges } from '../../src/destinations/network-policy.js';
import { ConfigurationError } from '../../src/errors.js';

describe('the network policy of destinations', () => {
  const policy = networkPolicy();

  it('refuses link-local and cloud metadata addresses by default, IPv4-mapped and zoned ones too, and nothing else', () => {
    for (const address of [
      '169.254.169.254',
      '169.254.0.1',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      'fe80::1',
      'fe80::1%eth0',
      'febf::1',
      'fd00:ec2::254',
    ])
      expect([address, policy.refusal(address)]).toEqual([address, expect.stringMatching(/link-local and cloud metadata/)]);
    for (const address of ['127.0.0.1', '10.0.0.1', '169.255.0.1', '::1', 'fec0::1', 'fd00:ec2::253', '2606:4700::1'])
      expect([address, policy.refusal(address)]).toEqual([address, undefined]);
  });

  it('reads a URL host as an address in whatever spelling the URL parser or the resolver takes; a name is left to its lookup', () => {
    for (const host of [
      '169.254.169.254',
      '2852039166',
      '0xA9FEA9FE',
      '0251.0376.0251.0376',
      '169.254.43518',
      '[::ffff:a9fe:a9fe]',
      '[fe80::1]',
    ])
      expect([host, policy.hostRefusal(host)]).toEqual([host, expect.stringMatching(/169\.254\.0\.0\/16|fe80::\/10/)]);
    expect(policy.hostRefusal('2852039166')).toBe(
      '2852039166 is 169.254.169.254, which is in 169.254.0.0/16: link-local and cloud metadata addresses are never connected to',
    );
    for (const host of ['metadata.google.internal', 'example.com', '127.0.0.1', '[::1]']) expect(policy.hostRefusal(host)).toBeUndefined();
  });

  it('adds the ranges of deny, and opens the holes of allow in them and in the default ones', () => {
    const configured = networkPolicy({ deny: ['127.0.0.0/8', '10.1.2.3'], allow: ['127.0.0.1', '169.254.10.0/24'] });
    expect(configured.refusal('127.0.0.2')).toBe('127.0.0.2 is in 127.0.0.0/8, a range denied to destinations');
    expect(configured.refusal('::ffff:127.0.0.2')).toMatch(/in 127\.0\.0\.0\/8/);
    expect(configured.refusal('10.1.2.3')).toMatch(/in 10\.1\.2\.3\/32/);
    expect(configured.refusal('10.1.2.4')).toBeUndefined();
    expect(configured.refusal('127.0.0.1')).toBeUndefined();
    expect(configured.refusal('::ffff:127.0.0.1')).toBeUndefined();
    expect(configured.refusal('169.254.10.7')).toBeUndefined();
    expect(configured.refusal('169.254.169.254')).toMatch(/link-local/);
  });

  it('refuses a range that is not one, naming where it was given', () => {
    expect(parseRanges(['10.0.0.0/8', 'fd00::/8', '[::1]', '192.0.2.1'], 'deny').map((r) => r.text)).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '::1/128',
      '192.0.2.1/32',
    ]);
    for (const wrong of ['10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0/8', ''])
      expect(() => parseRanges([wrong], '--destinations-deny')).toThrow(
        new ConfigurationError(`--destinations-deny must be CIDR ranges such as 10.0.0.0/8 or fd00::/8 (comma-separated), got "${wrong}"`),
      );
  });
});
