// The pure parts of destinations: Standard Webhooks signing (against the specification's published
// example), the webhook id, filters (erasures included), schedules, rates and Retry-After; error
// texts as stored and logged.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DestinationRequestError, errorText } from '../../src/destinations/errors.js';
import { parseFilter, passes } from '../../src/destinations/filter.js';
import { DEFAULT_SCHEDULE, delayBefore, parseRate, parseSchedule, retryAfterMs } from '../../src/destinations/schedule.js';
import { checkSecret, generateSecret, signatureHeader, webhookId } from '../../src/destinations/signing.js';
import { checkBrokerRequest, checkUrl } from '../../src/destinations/registry.js';
import { maskedUrl } from '../../src/destinations/masked-url.js';
import { campaignRow, candidateRow, creditsRow } from '../support/changes.js';

describe('Standard Webhooks signing', () => {
  it("gives the specification's example signature", () => {
    // https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md (the libraries' shared test vector)
    const header = signatureHeader(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(header).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs with every current secret during a rotation, space-separated', () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const header = signatureHeader([a, b], 'id', 1, '{}');
    const expected = (secret: string) =>
      `v1,${createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
        .update('id.1.{}')
        .digest('base64')}`;
    expect(header).toBe(`${expected(a)} ${expected(b)}`);
  });

  it('generates whsec_ and 32 random bytes as base64, and refuses a short, malformed or plain secret', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(() => checkSecret('whsec_c2hvcnQ=')).toThrow(DestinationRequestError);
    expect(() => checkSecret('whsec_not base64!')).toThrow(/base64/);
    // The Standard Webhooks libraries base64-decode what follows whsec_: plain bytes could not be verified with them.
    expect(() => checkSecret('a-plain-secret-of-24-bytes')).toThrow(/a destination secret is whsec_ and base64/);
    expect(() => checkSecret(`whsec_${Buffer.alloc(16, 7).toString('base64')}`)).not.toThrow();
  });
});

describe('the webhook id', () => {
  const change = { seq: 7, entity: 'candidate' as const, id: 'c1', events: ['e1'] };

  it('is the same for one change and destination, whatever else changed (a redacted row)', () => {
    expect(webhookId('dst_a', change)).toBe(webhookId('dst_a', { ...change }));
    expect(webhookId('dst_a', change)).toMatch(/^dst_a_7_[0-9a-f]{16}$/);
  });

  it('differs between destinations, and for another change given the same seq', () => {
    expect(webhookId('dst_b', change)).not.toBe(webhookId('dst_a', change));
    expect(webhookId('dst_a', { ...change, id: 'c2' })).not.toBe(webhookId('dst_a', change));
    expect(webhookId('dst_a', { ...change, events: ['e2'] })).not.toBe(webhookId('dst_a', change));
  });
});

describe('filters', () => {
  const candidate = (campaign: string, score: number | null) =>
    ({
      entity: 'candidate',
      id: 'c1',
      op: 'upsert',
      row: candidateRow({ candidate_id: 'c1', campaign_id: campaign, interview_score: score }),
    }) as const;
  const campaign = { entity: 'campaign', id: 'cmp_1', op: 'upsert', row: campaignRow({ campaign_id: 'cmp_1' }) } as const;
  const credits = { entity: 'credits', id: 'default', op: 'upsert', row: creditsRow({ credits_remaining: 3 }) } as const;
  const erase = { entity: 'candidate', id: 'c1', op: 'erase', row: null } as const;

  it('parses entity, campaign and min_score, and refuses an unknown field, a bad value or a repeat', () => {
    expect(parseFilter(['entity=candidate', 'campaign=cmp_1', 'min_score=7.5'])).toEqual({
      entity: 'candidate',
      campaign: 'cmp_1',
      min_score: 7.5,
    });
    expect(() => parseFilter(['score=7'])).toThrow(/unknown field "score"/);
    expect(() => parseFilter(['entity=person'])).toThrow(/entity must be campaign, candidate, credits/);
    expect(() => parseFilter(['min_score=high'])).toThrow(/min_score must be a number/);
    expect(() => parseFilter(['campaign=a', 'campaign=b'])).toThrow(/twice/);
  });

  it('lets everything through when empty', () => {
    for (const change of [candidate('cmp_1', 3), campaign, credits, erase]) expect(passes({}, change)).toBe(true);
  });

  it('by entity, by campaign (a candidate’s or the campaign itself), by least score', () => {
    expect(passes({ entity: 'campaign' }, campaign)).toBe(true);
    expect(passes({ entity: 'campaign' }, credits)).toBe(false);
    expect(passes({ campaign: 'cmp_1' }, candidate('cmp_1', null))).toBe(true);
    expect(passes({ campaign: 'cmp_1' }, candidate('cmp_2', null))).toBe(false);
    expect(passes({ campaign: 'cmp_1' }, campaign)).toBe(true);
    expect(passes({ campaign: 'cmp_1' }, credits)).toBe(false);
    expect(passes({ min_score: 7 }, candidate('cmp_1', 7))).toBe(true);
    expect(passes({ min_score: 7 }, candidate('cmp_1', 6.9))).toBe(false);
    expect(passes({ min_score: 7 }, candidate('cmp_1', null))).toBe(false);
    expect(passes({ min_score: 7 }, campaign)).toBe(false);
  });

  it('lets an erasure through every filter that lets candidates through: the person may have been sent before', () => {
    expect(passes({ min_score: 9, campaign: 'cmp_9' }, erase)).toBe(true);
    expect(passes({ entity: 'candidate' }, erase)).toBe(true);
    expect(passes({ entity: 'campaign' }, erase)).toBe(false);
  });
});

describe('schedules, rates, Retry-After and URLs', () => {
  it('parses a schedule, and refuses a delay without a unit', () => {
    expect(parseSchedule('0s,100ms,5m,2h')).toEqual([0, 100, 300_000, 7_200_000]);
    expect(() => parseSchedule('0,5s')).toThrow(/number and a unit/);
  });

  it('the default is the Standard Webhooks schedule, jittered by up to a fifth, then spent', () => {
    expect(DEFAULT_SCHEDULE).toHaveLength(10);
    expect(delayBefore(DEFAULT_SCHEDULE, 1, () => 0)).toBe(5000);
    expect(delayBefore(DEFAULT_SCHEDULE, 1, () => 0.999)).toBe(5999);
    expect(delayBefore(DEFAULT_SCHEDULE, 10)).toBeUndefined();
  });

  it('parses a rate per second or minute', () => {
    expect(parseRate('10/s')).toBe(10);
    expect(parseRate('30/m')).toBe(0.5);
    expect(() => parseRate('0/s')).toThrow(DestinationRequestError);
    expect(() => parseRate('fast')).toThrow(/requests per second/);
  });

  it('reads Retry-After as seconds or a date, at most a day', () => {
    const now = Date.parse('2026-11-28T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Sat, 28 Nov 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('999999', now)).toBe(86_400_000);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('takes http(s), redis(s), nats and tls URLs, refuses any other scheme and a redis or nats URL with a path, never echoing a password', () => {
    expect(checkUrl('nats://u:p@nats.example.com:4222').protocol).toBe('nats:');
    expect(checkUrl('tls://nats.example.com:4222').protocol).toBe('tls:');
    expect(() => checkUrl('nats://u:hunter2@nats.example.com:4222/x')).toThrow(/--url must be nats:\/\/\[user:password@\]host:port/);
    expect(() => checkUrl('nats://u:hunter2@nats.example.com:4222/x')).not.toThrow(/hunter2/);
    expect(checkUrl('https://user:pw@example.com/x').hostname).toBe('example.com');
    expect(checkUrl('redis://:hunter2@localhost:6379/2').hostname).toBe('localhost');
    expect(checkUrl('rediss://localhost:6380').protocol).toBe('rediss:');
    expect(() => checkUrl('redis://:hunter2@localhost:6379/streams')).toThrow(/redis:\/\/host:port\[\/db\]/);
    expect(() => checkUrl('redis://:hunter2@localhost:6379/streams')).not.toThrow(/hunter2/);
    expect(() => checkUrl('ftp://u:hunter2@example.com')).toThrow(/http:\/\/, https:\/\/, redis:\/\/, rediss:\/\/, nats:\/\/ or tls:\/\//);
    expect(() => checkUrl('ftp://u:hunter2@example.com')).not.toThrow(/hunter2/);
    expect(() => checkUrl('ftp://example.com/x?key=hunter2')).toThrow(/ftp:\/\/example.com\/x\?key=\*\*\*"/);
  });

  it('shows a URL with its user info, its query values and its fragment masked, the query names kept; masking twice changes nothing', () => {
    const cases: Array<[string, string]> = [
      ['https://user:pw@crm.example.com:8443/in?key=s3cret&mode=fast', 'https://***@crm.example.com:8443/in?key=***&mode=***'],
      ['https://crm.example.com/in?s3cret', 'https://crm.example.com/in?***'],
      ['https://crm.example.com/in?a=1&&b=&c=x=y#s3cret', 'https://crm.example.com/in?a=***&&b=***&c=***#***'],
      ['https://crm.example.com/in', 'https://crm.example.com/in'],
      ['redis://:s3cret@127.0.0.1:6379/2', 'redis://***@127.0.0.1:6379/2'],
      ['not a url?key=s3cret', 'not a url?***'],
      ['https://u:s3cret@[::1', 'https://***@[::1'],
    ];
    for (const [url, shown] of cases) {
      expect(maskedUrl(url)).toBe(shown);
      expect(maskedUrl(shown)).toBe(shown);
    }
  });

  it('refuses a secret or a rate for a redis:// destination, and a stream for an http(s) one', () => {
    expect(() => checkBrokerRequest({ url: 'redis://localhost:6379', secret: generateSecret() })).toThrow(/--secret is for http\(s\)/);
    expect(() => checkBrokerRequest({ url: 'redis://localhost:6379', rate: 5 })).toThrow(/--rate is for http\(s\)/);
    expect(() => checkBrokerRequest({ url: 'https://example.com', stream: 's' })).toThrow(/--stream is for redis:\/\//);
    expect(() => checkBrokerRequest({ url: 'rediss://localhost:6379', stream: 'events' })).not.toThrow();
  });
});

describe('error texts as stored and logged', () => {
  it('keeps a short one as it is, and cuts a long one to 1 KiB, between characters, saying how long it was', () => {
    expect(errorText('ECONNREFUSED')).toBe('ECONNREFUSED');
    const long = `ERR ${'é'.repeat(5000)}`;
    const cut = errorText(long);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(1024);
    expect(cut).toMatch(/^ERR é+ … \(10004 bytes, cut\)$/);
    expect(cut).not.toContain('\uFFFD');
  });
});
