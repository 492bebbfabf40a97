// The option tables of `prequal-hooks destinations` (one per verb). The accounts key file is the
// one `accounts` and `serve` take: destinations' URLs and secrets are sealed under it.
import { parseRate, parseSchedule } from '../destinations/schedule.js';
import { DestinationRequestError } from '../destinations/errors.js';
import { DEFAULT_DENIED_RANGES, parseRanges, type NetworkRules } from '../destinations/network-policy.js';
import { ConfigurationError } from '../errors.js';
import { parseDuration } from '../privacy/index.js';
import { UsageError } from './args.js';
import { ACCOUNTS_KEY_OPTIONS } from './accounts-options.js';
import { withFileVariants } from './file-variants.js';
import { ACCOUNT_OPTIONS, databaseOptions, flag, flagsOnly, FORMAT_OPTIONS, list, optional, value } from './options.js';

/** A parser's DestinationRequestError as the usage error it is. */
function usage<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (error) {
      if (error instanceof DestinationRequestError) throw new UsageError(error.message);
      throw error;
    }
  };
}

/** A change's seq: a whole number from 0. */
function seqOf(text: string, name: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new UsageError(`${name} must be a change's seq (a whole number), got "${text}"`);
  return Number(text);
}

/** `--signing`: hmac or ed25519. */
function signingOf(text: string, name: string): 'hmac' | 'ed25519' {
  if (text !== 'hmac' && text !== 'ed25519') throw new UsageError(`${name} must be hmac or ed25519, got "${text}"`);
  return text;
}

/** A client certificate, its key and authorities: files read when the command runs, then sealed in the database. */
const TLS_FILES = {
  'client-cert': optional({
    placeholder: '<file>',
    help: 'a PEM client certificate presented to the destination (mutual TLS; https://, rediss://, tls://), with --client-key; sealed in the database',
  }),
  'client-key': optional({ placeholder: '<file>', help: "the client certificate's PEM private key (unencrypted); sealed, never shown" }),
  ca: optional({
    placeholder: '<file>',
    help: "PEM certificates of the authorities the destination's certificate is checked against, instead of the system's",
  }),
};

const JSON_FLAG = flagsOnly({ json: flag({ help: 'print the result as JSON' }) });

/**
 * Where destinations may connect [PREQUAL_HOOKS_DESTINATIONS_DENY, PREQUAL_HOOKS_DESTINATIONS_ALLOW]:
 * serve applies them to every connection, `destinations add` to the address a URL names.
 */
export const NETWORK_OPTIONS = {
  'destinations-deny': list({
    placeholder: '<cidr,…>',
    help: `ranges destinations never connect to (an address, redis:// too, or a name resolving there), beside the link-local and cloud metadata ones always denied (${DEFAULT_DENIED_RANGES.join(', ')}); e.g. 10.0.0.0/8,fd00::/8`,
  }),
  'destinations-allow': list({
    placeholder: '<cidr,…>',
    help: 'holes opened in the denied ranges, those denied by default too (e.g. 169.254.10.0/24 for a service of yours there)',
  }),
};

/** The network rules the options give, each range checked: a wrong one is a usage error naming where it was given. */
export function networkRulesOf(
  values: { 'destinations-deny': string[]; 'destinations-allow': string[] },
  nameOf: (option: keyof typeof NETWORK_OPTIONS) => string,
): NetworkRules {
  for (const option of ['destinations-deny', 'destinations-allow'] as const) {
    try {
      parseRanges(values[option], nameOf(option));
    } catch (error) {
      if (error instanceof ConfigurationError) throw new UsageError(error.message);
      throw error;
    }
  }
  return { deny: values['destinations-deny'], allow: values['destinations-allow'] };
}

const DESTINATION = flagsOnly({
  destination: optional({ placeholder: '<id>', help: 'the destination id (dst_…), as add printed it and list shows it' }),
});

export const ADD_OPTIONS = withFileVariants({
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    url: optional({
      placeholder: '<url>',
      help: 'where the changes are POSTed: http:// or https:// (a user name and password in it are sent as Basic authorization; neither they nor the values of its query are ever shown, key=***); or redis://[:password@]host:port[/db] (rediss:// for TLS): appended to a Redis stream; or nats://[user:password@]host:port (tls:// for TLS): published through NATS JetStream (with --subject)',
    }),
    stream: optional({
      placeholder: '<name>',
      help: "a redis:// destination's stream; default prequal-hooks:<account>:changes",
    }),
    subject: optional({
      placeholder: '<subject>',
      help: "a nats:// (tls://) destination's subject, required: each change is published to it through JetStream, and a stream of yours must capture it",
    }),
    secret: optional({
      placeholder: '<s>',
      help: 'the signing secret, whsec_ and base64 (Standard Webhooks); default: generated and printed once (not for redis://)',
      secret: true,
      fileVariant: true,
    }),
    filter: list({
      placeholder: '<field=value>',
      help: 'entity=campaign|candidate|credits, campaign=<id>, min_score=<n>; repeat to combine (all must hold)',
    }),
    rate: value({
      placeholder: '<n>/s',
      help: 'requests per second at most (or <n>/m per minute; not for redis://)',
      default: undefined,
      parse: usage(parseRate),
    }),
    'retry-schedule': value({
      placeholder: '<delays>',
      help: 'the delay before each attempt, comma-separated (ms, s, m, h, d)',
      default: undefined,
      defaultHelp: '0s,5s,5m,30m,2h,5h,10h,14h,20h,24h',
      parse: usage(parseSchedule),
    }),
    after: value({
      placeholder: '<seq>',
      help: "start after this change (0: every change the feed keeps, a backfill); default: the account's last change, so that it receives what changes from now on",
      default: undefined,
      parse: seqOf,
    }),
    header: list({
      placeholder: "'Name: value'",
      help: 'a header sent on every POST (http(s) only; repeat for more), sealed like the URL and never shown (list shows its name); hop-by-hop, framing and webhook-* headers are refused',
      secret: true,
      whole: true,
    }),
    'oauth2-token-url': optional({
      placeholder: '<url>',
      help: 'an OAuth2 token endpoint (client credentials): each POST carries its Bearer token, fetched again before it expires and once on a 401',
    }),
    'oauth2-client-id': optional({ placeholder: '<id>', help: 'the OAuth2 client id (with --oauth2-token-url)' }),
    'oauth2-client-secret': optional({
      placeholder: '<secret>',
      help: 'the OAuth2 client secret, sent to the token endpoint by HTTP Basic; sealed, never shown',
      secret: true,
      fileVariant: true,
    }),
    'oauth2-scope': optional({ placeholder: '<scope>', help: 'the scope asked of the token endpoint (space-separated)' }),
    ...TLS_FILES,
    signing: value({
      placeholder: 'hmac|ed25519',
      help: 'hmac: a whsec_ secret signs v1 (HMAC-SHA256); ed25519: a generated key signs v1a, and its public key (whpk_) is printed once, so the receiver holds no secret',
      default: undefined,
      defaultHelp: 'hmac',
      parse: signingOf,
    }),
    operational: flag({
      help: "receive the account's operator events (a destination paused, resumed or disabled, a delivery set aside) instead of its changes; http(s):// only, no --filter",
    }),
  }),
  ...NETWORK_OPTIONS,
  ...JSON_FLAG,
});

export const LIST_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...flagsOnly({
    destination: optional({
      placeholder: '<id>',
      help: 'only this destination, with its dead deliveries (the first 100: seq, entity, id, attempts, last status and error)',
    }),
  }),
  ...FORMAT_OPTIONS,
};

export const STATE_OPTIONS = { ...databaseOptions('must exist'), ...ACCOUNT_OPTIONS, ...DESTINATION, ...JSON_FLAG };

export const RETRY_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...DESTINATION,
  ...flagsOnly({
    change: value({
      placeholder: '<seq>',
      help: 'retry only this dead change (its seq); default: every dead change of the destination',
      default: undefined,
      parse: seqOf,
    }),
    all: flag({ help: 'every dead change of every destination of the account' }),
  }),
  ...JSON_FLAG,
};

export const ROTATE_OPTIONS = withFileVariants({
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...ACCOUNT_OPTIONS,
  ...DESTINATION,
  ...flagsOnly({
    secret: optional({
      placeholder: '<s>',
      help: 'the new signing secret, whsec_ and base64; default: generated and printed once',
      secret: true,
      fileVariant: true,
    }),
    signing: value({
      placeholder: 'hmac|ed25519',
      help: 'what the new secret is: hmac (whsec_, v1) or ed25519 (a generated key, v1a, its public key printed once); default: what it signs with now. The previous one keeps signing for --keep-previous, so both v1 and v1a go during a move',
      default: undefined,
      parse: signingOf,
    }),
    'keep-previous': value({
      placeholder: '<duration>',
      help: 'how long the previous secret keeps signing beside the new one (units s, m, h, d, w); 0 ends it now',
      default: 24 * 60 * 60 * 1000,
      defaultHelp: '24h',
      parse: (text: string, name: string) => {
        const ms = text.trim() === '0' ? 0 : parseDuration(text);
        if (ms === undefined)
          throw new UsageError(`${name} must be 0, or a whole number and a unit, s, m, h, d or w (such as 24h), got "${text}"`);
        return ms;
      },
    }),
  }),
  ...JSON_FLAG,
});

export const REPLAY_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT_OPTIONS,
  ...DESTINATION,
  ...flagsOnly({
    after: value({
      placeholder: '<seq>',
      help: 'send again the changes after this seq (0: from the oldest the feed keeps)',
      default: undefined,
      parse: seqOf,
    }),
    until: value({
      placeholder: '<seq>',
      help: 'up to this seq, inclusive; default: the last the destination has looked at',
      default: undefined,
      parse: seqOf,
    }),
  }),
  ...JSON_FLAG,
};

export const SET_TLS_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...ACCOUNT_OPTIONS,
  ...DESTINATION,
  ...flagsOnly(TLS_FILES),
  ...JSON_FLAG,
};
