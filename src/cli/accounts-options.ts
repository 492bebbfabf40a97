// The option tables of `prequal-hooks accounts` (one per subcommand), and the accounts key file
// option that serve shares. Secrets are read from flags or files only: an account's secret is
// never taken from PREQUAL_HOOKS_SECRET, which is the default account's.
import { parseDuration } from '../privacy/index.js';
import { UsageError } from './args.js';
import { withFileVariants } from './file-variants.js';
import { databaseOptions, flag, flagsOnly, FORMAT_OPTIONS, optional, value } from './options.js';

/** `--accounts-key-file` [PREQUAL_HOOKS_ACCOUNTS_KEY_FILE]: where the key of the registry's secrets is. */
export const ACCOUNTS_KEY_OPTIONS = {
  'accounts-key-file': optional({
    placeholder: '<path>',
    help: 'the key that encrypts account secrets and API keys (32 bytes, base64), kept apart from the database; SQLite default: <db>.accounts-key, made at first need; PostgreSQL: required, the same file on every replica',
  }),
};

const ACCOUNT = flagsOnly({
  account: optional({ placeholder: '<id>', help: 'the account id: 1 to 63 lowercase letters, digits, "-" and "_"' }),
});

const JSON_FLAG = flagsOnly({ json: flag({ help: 'print the result as JSON' }) });

const SECRET = flagsOnly({
  secret: optional({
    placeholder: '<s>',
    help: "the account's webhook secret, as set in its agency dashboard: random, 16 bytes or more (default: generated, whsec_ and 32 random bytes, printed once)",

    secret: true,
    fileVariant: true,
  }),
});

const API_KEY = flagsOnly({
  'api-key': optional({ placeholder: '<k>', help: "the account's API key, for reconciliation", secret: true, fileVariant: true }),
});

/** `--keep-previous`: how long the previous secret keeps verifying; `0` ends it now. */
function overlap(text: string, name: string): number {
  if (text.trim() === '0') return 0;
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(`${name} must be 0, or a whole number and a unit, s, m, h, d or w (such as 24h), got "${text}"`);
  return ms;
}

export const ADD_OPTIONS = withFileVariants({
  ...databaseOptions('creates'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...ACCOUNT,
  ...flagsOnly({ name: optional({ placeholder: '<text>', help: "the agency's name, for people (optional)" }) }),
  ...SECRET,
  ...API_KEY,
  ...JSON_FLAG,
});

export const LIST_OPTIONS = { ...databaseOptions('must exist'), ...FORMAT_OPTIONS };

export const STATE_OPTIONS = { ...databaseOptions('must exist'), ...ACCOUNT, ...JSON_FLAG };

export const REMOVE_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNT,
  ...flagsOnly({
    'erase-data': flag({
      help: 'required: every row of the account is erased (inbox, projection, erasures), then the account and its secrets',
    }),
    reason: optional({ placeholder: '<text>', help: 'required: why, kept in the audit trail (account_removals); no personal data' }),
  }),
  ...JSON_FLAG,
};

export const ROTATE_OPTIONS = withFileVariants({
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...ACCOUNT,
  ...SECRET,
  ...flagsOnly({
    'keep-previous': value({
      placeholder: '<duration>',
      help: 'how long the previous secret keeps verifying (units s, m, h, d, w); 0 ends it now',
      default: 24 * 60 * 60 * 1000,
      defaultHelp: '24h',
      parse: overlap,
    }),
  }),
  ...JSON_FLAG,
});

export const API_KEY_OPTIONS = withFileVariants({
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...ACCOUNT,
  ...API_KEY,
  ...flagsOnly({ clear: flag({ help: "forget the account's API key instead" }) }),
  ...JSON_FLAG,
});

export const FEED_TOKEN_OPTIONS = withFileVariants({
  ...databaseOptions('must exist'),
  ...ACCOUNT,
  ...flagsOnly({
    token: optional({
      placeholder: '<t>',
      help: "the token that opens the account's change feed and nothing else (GET /changes?account=<id> of serve), 16 characters or more; stored as its SHA-256",
      secret: true,
      fileVariant: true,
    }),
    clear: flag({ help: "remove the account's feed token instead" }),
  }),
  ...JSON_FLAG,
});

export const REKEY_OPTIONS = {
  ...databaseOptions('must exist'),
  ...ACCOUNTS_KEY_OPTIONS,
  ...flagsOnly({
    'new-key-file': optional({ placeholder: '<path>', help: 'the new key (32 bytes, base64 or hex); default: a new random key' }),
  }),
  ...JSON_FLAG,
};
