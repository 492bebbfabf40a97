// serve's options, declared once, and the typed configuration they resolve into.
import { resolve } from 'node:path';
import { ACCOUNTS_KEY_OPTIONS } from './accounts-options.js';
import { NETWORK_OPTIONS, networkRulesOf } from './destinations-options.js';
import type { NetworkRules } from '../destinations/network-policy.js';
import { MIN_TOKEN_LENGTH } from '../console/auth.js';
import { DEFAULT_EVENT_HEADER, DEFAULT_MAX_BODY_BYTES, DEFAULT_SIGNATURE_HEADER } from '../receive/intake.js';
import { DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MIN_BYTES_PER_SECOND, DEFAULT_MIN_RATE_GRACE_MS } from '../receive/budget.js';
import { DEFAULT_MAX_CONNECTIONS } from '../standalone/start-standalone.js';
import { DEFAULT_FEED_STALL_MS } from '../receiver/feed.js';
import { DEFAULT_ADMISSION_RULES, type AdmissionRules } from '../receive/admission.js';
import { byteSize, databasePath, integer, schemaFor, UsageError } from './args.js';
import { SERVICE_OPTIONS } from './service.js';
import { parseDuration } from '../privacy/retention.js';
import { resolveFileVariants, withFileVariants, type SecretFile } from './file-variants.js';
import type { TlsFiles } from './tls-files.js';
import {
  configurationDump,
  databaseOptions,
  flag,
  list,
  optional,
  optionsHelp,
  value,
  type OptionValues,
  type ParsedCommand,
  type Source,
} from './options.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Shorter than this, a secret can be guessed offline from one signed request. */
export const WEAK_SECRET_LENGTH = 16;

/** How long the feed's changes are kept by default (docs/changes.md). */
const DEFAULT_CHANGES_RETENTION_MS = 30 * 24 * 60 * 60_000;

function durationOf(text: string, name: string, example: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(`${name} must be a whole number and a unit, s, m, h, d or w (such as ${example}), got "${text}"`);
  return ms;
}

export const SERVE_OPTIONS = withFileVariants({
  port: value({
    placeholder: '<n>',
    help: 'port to listen on',
    env: ['PREQUAL_HOOKS_PORT', 'PORT'],
    default: 8787,
    defaultHelp: '8787',
    parse: (text, name) => integer(name, text, 8787, 0, 65535),
  }),
  host: value({
    placeholder: '<addr>',
    help: 'address to listen on: 0.0.0.0 is every interface, 127.0.0.1 keeps it to this machine (as `npm start` does)',
    default: '0.0.0.0',
    defaultHelp: '0.0.0.0',
    parse: (text) => text,
  }),
  'tls-cert': optional({
    placeholder: '<path>',
    help: 'serve HTTPS (TLS 1.2 or later) with this PEM certificate chain; needs --tls-key; SIGHUP re-reads both',
  }),
  'tls-key': optional({ placeholder: '<path>', help: 'the PEM private key of --tls-cert' }),
  'trust-proxy': flag({
    help: "behind a reverse proxy: take the client's address from the last X-Forwarded-For entry (set by the proxy) instead of the proxy's, in the log and for each address's share of the connections and of the bodies held",
  }),
  ...databaseOptions('creates'),
  secret: list({
    placeholder: '<s>',
    help: 'shared secret from the agency dashboard; repeat it or separate with commas during a rotation',
    secret: true,
    fileVariant: true,
  }),
  path: value({
    placeholder: '<p>',
    help: 'webhook route',
    default: '/webhooks',
    defaultHelp: '/webhooks',
    parse: (text, name) => {
      if (!text.startsWith('/')) throw new UsageError(`${name} must start with "/", got "${text}"`);
      return text;
    },
  }),
  'max-body': value({
    placeholder: '<size>',
    help: 'largest body, e.g. 1mb or 262144',
    default: DEFAULT_MAX_BODY_BYTES,
    defaultHelp: '1mb',
    parse: (text, name) => byteSize(name, text, DEFAULT_MAX_BODY_BYTES),
  }),
  'max-buffered-bytes': value({
    placeholder: '<size>',
    help: 'request bodies held at once before their signatures are verified, all requests together; past it, new bodies get 503 BUSY (with Retry-After) unread; no less than --max-body',
    default: DEFAULT_MAX_BUFFERED_BYTES,
    defaultHelp: '64mb',
    parse: (text, name) => byteSize(name, text, DEFAULT_MAX_BUFFERED_BYTES),
  }),
  'min-body-rate': value({
    placeholder: '<bytes/s>',
    help: 'a body that came slower than this since its start, once --min-body-rate-grace has passed, is cut off with 408 (0: no minimum)',
    default: DEFAULT_MIN_BYTES_PER_SECOND,
    defaultHelp: String(DEFAULT_MIN_BYTES_PER_SECOND),
    parse: (text, name) => integer(name, text, DEFAULT_MIN_BYTES_PER_SECOND, 0, 1024 * 1024 * 1024),
  }),
  'min-body-rate-grace': value({
    placeholder: '<s>',
    help: 'seconds a body may take before --min-body-rate applies',
    default: DEFAULT_MIN_RATE_GRACE_MS / 1000,
    defaultHelp: String(DEFAULT_MIN_RATE_GRACE_MS / 1000),
    parse: (text, name) => integer(name, text, DEFAULT_MIN_RATE_GRACE_MS / 1000, 1, 3600),
  }),
  'failure-burst': value({
    placeholder: '<n>',
    help: 'failed requests (a wrong signature, an unknown path, a body too large, too slow or in too many pieces) a client address may have at once; while requests contend for the event loop and another address is active, an address past them is refused 429 with Retry-After, at its connection unread',
    default: DEFAULT_ADMISSION_RULES.failureBurst,
    defaultHelp: String(DEFAULT_ADMISSION_RULES.failureBurst),
    parse: (text, name) => integer(name, text, DEFAULT_ADMISSION_RULES.failureBurst, 1, 1_000_000),
  }),
  'failure-rate': value({
    placeholder: '<n/s>',
    help: 'failures a client address earns back each second (each of its requests that verifies earns one more)',
    default: DEFAULT_ADMISSION_RULES.failuresPerSecond,
    defaultHelp: String(DEFAULT_ADMISSION_RULES.failuresPerSecond),
    parse: (text, name) => integer(name, text, DEFAULT_ADMISSION_RULES.failuresPerSecond, 1, 1_000_000),
  }),
  'contention-busy': value({
    placeholder: '<%>',
    help: "the share of a quarter of a second the event loop spends working from which requests contend for it: addresses over --failure-burst are then refused, and each address's requests beyond --client-share wait their turn",
    default: DEFAULT_ADMISSION_RULES.contentionUtilization * 100,
    defaultHelp: String(DEFAULT_ADMISSION_RULES.contentionUtilization * 100),
    parse: (text, name) => integer(name, text, DEFAULT_ADMISSION_RULES.contentionUtilization * 100, 1, 100),
  }),
  'contention-hold': value({
    placeholder: '<s>',
    help: 'seconds contention is held after the event loop was last that busy',
    default: DEFAULT_ADMISSION_RULES.contentionHoldMs / 1000,
    defaultHelp: String(DEFAULT_ADMISSION_RULES.contentionHoldMs / 1000),
    parse: (text, name) => integer(name, text, DEFAULT_ADMISSION_RULES.contentionHoldMs / 1000, 1, 3600),
  }),
  'client-share': value({
    placeholder: '<n>',
    help: 'requests of one client address read and verified at once while requests contend; its others wait, unread, for its own to finish',
    default: DEFAULT_ADMISSION_RULES.share,
    defaultHelp: String(DEFAULT_ADMISSION_RULES.share),
    parse: (text, name) => integer(name, text, DEFAULT_ADMISSION_RULES.share, 1, 1_000_000),
  }),
  'max-connections': value({
    placeholder: '<n>',
    help: 'open connections at most; at the cap a new connection is taken and the one that has delivered least for longest is closed (the heaviest other client address first), never one whose request is being answered',
    default: DEFAULT_MAX_CONNECTIONS,
    defaultHelp: String(DEFAULT_MAX_CONNECTIONS),
    parse: (text, name) => integer(name, text, DEFAULT_MAX_CONNECTIONS, 1, 1_000_000),
  }),
  'allow-unsigned': flag({ help: 'accept unsigned events (only without a secret; anyone can then post events)' }),
  'signature-header': value({
    placeholder: '<h>',
    help: 'the signature header',
    default: DEFAULT_SIGNATURE_HEADER,
    defaultHelp: DEFAULT_SIGNATURE_HEADER,
    parse: (text) => text,
  }),
  'event-header': value({
    placeholder: '<h>',
    help: 'the event kind header',
    default: DEFAULT_EVENT_HEADER,
    defaultHelp: DEFAULT_EVENT_HEADER,
    parse: (text) => text,
  }),
  'log-level': value({
    placeholder: '<level>',
    help: 'trace, debug, info, warn, error',
    default: 'info',
    defaultHelp: 'info',
    parse: (text, name) => {
      if (!LOG_LEVELS.includes(text)) throw new UsageError(`${name} must be one of trace, debug, info, warn, error, got "${text}"`);
      return text;
    },
  }),
  'pool-size': value({
    placeholder: '<n>',
    help: 'PostgreSQL: connections in the pool',
    default: 10,
    defaultHelp: '10',
    parse: (text, name) => integer(name, text, 10, 2, 1000),
  }),
  'no-migrate': flag({
    help: 'refuse to start on a database that needs migrations (one line naming them, exit 1) instead of applying them: for those who run "prequal-hooks migrate" after a backup',
  }),
  'dashboard-token': optional({
    placeholder: '<t>',
    help: 'serve the console at /dashboard and GET /metrics (Prometheus) to requests carrying this token (16 characters or more), as HTTP Basic password or Bearer; without it neither is served',
    secret: true,
    fileVariant: true,
  }),
  'dashboard-readonly-token': optional({
    placeholder: '<t>',
    help: 'serve the console at /dashboard read-only to requests carrying this token (16 characters or more): no actions (POSTs answer 403), personal data always masked, no export; not /metrics',
    secret: true,
    fileVariant: true,
  }),
  'metrics-token': optional({
    placeholder: '<t>',
    help: 'serve GET /metrics (Prometheus) to requests carrying this token (16 characters or more), and nothing else: a scraper needs no access to the console',
    secret: true,
    fileVariant: true,
  }),
  'feed-token': optional({
    placeholder: '<t>',
    help: 'serve the change feed, GET /changes (docs/changes.md), to requests carrying this token (16 characters or more), and nothing else; the dashboard token opens it too, the read-only one never (a change holds personal data); without either it is not served',
    secret: true,
    fileVariant: true,
  }),
  'changes-retention': value({
    placeholder: '<duration>',
    help: 'keep the changes of the feed this long from when they were recorded (e.g. 30d; units s, m, h, d, w); older ones are dropped hourly, and a reader left behind them is told (410)',
    default: DEFAULT_CHANGES_RETENTION_MS,
    defaultHelp: '30d',
    parse: (text: string, name: string) => durationOf(text, name, '30d'),
  }),
  'feed-stall-timeout': value({
    placeholder: '<duration>',
    help: 'close a live stream of the feed (server-sent events) whose client has left 1 MiB of changes unread this long (units s, m, h, d, w); meanwhile nothing more is read for it, so a client that stops reading costs no more memory',
    default: DEFAULT_FEED_STALL_MS,
    defaultHelp: '30s',
    parse: (text: string, name: string) => durationOf(text, name, '30s'),
  }),
  ...ACCOUNTS_KEY_OPTIONS,
  ...NETWORK_OPTIONS,
  'reconcile-every': value({
    placeholder: '<m>',
    help: 'every <m> minutes, repair what webhooks missed from the service\'s API (see "prequal-hooks reconcile --help"); needs --api-url and --api-key (the default account\'s), and reconciles each other account that has an API key with its own',
    default: 0,
    parse: (text, name) => {
      const minutes = Number(text);
      if (!(minutes >= 0.05 && minutes <= 7 * 24 * 60))
        throw new UsageError(`${name} must be a number of minutes from 0.05 to 10080, got "${text}"`);
      return minutes;
    },
  }),
  ...SERVICE_OPTIONS,
  'erase-inactive-after': value({
    placeholder: '<duration>',
    help: 'retention: at start and then daily, erase every candidate not heard of for this long (e.g. 730d; units s, m, h, d, w), by the rules of "prequal-hooks erase"; logs counts only',
    default: 0,
    parse: (text: string, name: string) => durationOf(text, name, '730d'),
  }),
  'print-config': flag({ help: 'print the effective configuration as JSON (secrets masked) and exit', env: [] }),
});

/**
 * Options since removed, still parsed (not in the help) so that a restart with an old
 * configuration does not fail: each one given is ignored, with a warning that says why.
 */
const REMOVED_OPTIONS = {
  'sqlite-thread': flag({ help: 'SQLite no longer runs in a worker thread, which measured no faster' }),
};

export const SERVE_HELP = `Usage: prequal-hooks serve [options]

Runs the standalone webhook receiver: verifies each request, stores it in the database (SQLite
or PostgreSQL) before answering 2xx, and projects campaigns, candidates and credits.

${optionsHelp(SERVE_OPTIONS)}

With no secret and no --allow-unsigned, a strong secret is generated once, kept in the
database and reused at later starts: paste it in the agency dashboard (API section, Webhooks tab).

Also served: GET /healthz (process up) and GET /readyz (database writable, handlers keeping up);
with a dashboard token, the operator console at /dashboard and GET /metrics;
--dashboard-readonly-token opens the console read-only, --metrics-token only GET /metrics;
with the dashboard token or --feed-token, the change feed at GET /changes.
SIGHUP re-reads --secret-file, the token files, --api-key-file and the TLS certificate and key
without dropping a connection; a file that cannot be read keeps what was in use, and an error
naming it and where it was given is logged. A file holding a secret that other users can read
is warned of, at start and at each SIGHUP.
SIGTERM or SIGINT stops accepting, finishes requests in flight, drains and exits 0.`;

/** What `serve` runs with: every option resolved once, checked against the others. */
export interface ServeConfig {
  port: number;
  host: string;
  /** A SQLite path made absolute, or a postgres:// URL as given. */
  database: string;
  schema?: string;
  secrets: string[];
  path: string;
  maxBodyBytes: number;
  /** Bytes of request bodies held at once before verification, all requests together. */
  maxBufferedBytes: number;
  maxConnections: number;
  /** A body slower than `minBytesPerSecond` since its start, after `minRateGraceMs`, is cut off (408). */
  bodyRates: { minBytesPerSecond: number; minRateGraceMs: number };
  /** Who is read and verified first when requests contend (docs/security.md, "Limits"). */
  admission: AdmissionRules;
  allowUnsigned: boolean;
  signatureHeader: string;
  eventHeader: string;
  logLevel: string;
  poolSize: number;
  /** false (--no-migrate): refuse a database that needs migrations. */
  migrate: boolean;
  /** Opens the console (every action) and /metrics. */
  dashboardToken?: string;
  /** Opens the console read-only: no actions, personal data masked. */
  dashboardReadonlyToken?: string;
  /** Opens /metrics only. */
  metricsToken?: string;
  /** Opens the change feed (GET /changes) only. */
  feedToken?: string;
  /** How long the feed's changes are kept (ms), pruned hourly. */
  changesRetention: number;
  /** How long a live stream's client may leave 1 MiB unread before the stream is closed (ms). */
  feedStallTimeout: number;
  /** HTTPS: the PEM files, read at start and at each SIGHUP. */
  tls?: TlsFiles;
  /** Log the client's address from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean;
  /** Where the secrets came from when from a file: SIGHUP re-reads it. */
  secretFile?: SecretFile;
  /** The token options given as files: SIGHUP re-reads them. */
  tokenFiles: Partial<Record<TokenOption, SecretFile>>;
  /** How errors name each token: its flag, its variable, or the file and what gave it. */
  tokenNames: Record<TokenOption, string>;
  /** The API key's file, when from a file: SIGHUP re-reads it. */
  apiKeyFile?: SecretFile;
  /** The accounts key file (`--accounts-key-file`); none: beside a SQLite database. */
  accountsKeyFile?: string;
  /** Where destinations may connect: ranges denied beside the default ones, and holes opened. */
  destinationsNetwork: NetworkRules;
  /** Minutes between reconciliations; 0: none. */
  reconcileEvery: number;
  /** Retention: erase candidates not heard of for this long (ms), at start and daily; 0: never. */
  eraseInactiveAfter: number;
  api: { 'api-url'?: string | undefined; 'api-key'?: string | undefined; 'allow-insecure-api-url'?: boolean };
  printConfig: boolean;
}

export type ServeCommand = ParsedCommand<typeof SERVE_OPTIONS>;

const TOKEN_OPTIONS = ['dashboard-token', 'dashboard-readonly-token', 'metrics-token', 'feed-token'] as const;
export type TokenOption = (typeof TOKEN_OPTIONS)[number];
type TokenField = 'dashboardToken' | 'dashboardReadonlyToken' | 'metricsToken' | 'feedToken';

/** What serve parses: its options, and the removed ones, so that an old configuration still starts. */
export const SERVE_ACCEPTED_OPTIONS = { ...SERVE_OPTIONS, ...REMOVED_OPTIONS };

/**
 * The options parsed from argv and the environment, with any secret files read in place of their
 * option; `removed`: a warning for each removed option given.
 */
export function serveCommand(
  command: ParsedCommand<typeof SERVE_ACCEPTED_OPTIONS>,
): ServeCommand & { files: Partial<Record<keyof typeof SERVE_OPTIONS, string>>; removed: string[] } {
  const removed = Object.entries(REMOVED_OPTIONS).flatMap(([name, spec]) => {
    const source = command.sources[name as keyof typeof REMOVED_OPTIONS];
    return source.from === 'default'
      ? []
      : [`${source.name} is ignored (the option was removed): ${spec.help}; remove it from the configuration`];
  });
  return { ...resolveFileVariants(SERVE_OPTIONS, command), removed };
}

/** The options' values, checked against each other, as the typed configuration the steps take. */
export function serveConfig(command: ReturnType<typeof serveCommand>): ServeConfig {
  const values: OptionValues<typeof SERVE_OPTIONS> = command.values;
  const tls = tlsFiles(command);
  const database = databasePath(values.db, {});
  const schema = schemaFor(values.schema, command.sources.schema.from === 'flag', database);
  if (values['allow-unsigned'] && values.secret.length > 0) {
    throw new UsageError('--allow-unsigned cannot be combined with a secret: signed receivers verify every request');
  }
  if (values['max-buffered-bytes'] < values['max-body']) {
    throw new UsageError(
      `${nameOf(command, 'max-buffered-bytes')} (${values['max-buffered-bytes']} bytes) must be no less than ${nameOf(command, 'max-body')} (${values['max-body']} bytes): a body at the limit could never be read`,
    );
  }
  const tokens = checkedTokens(command);
  return {
    port: values.port,
    host: values.host,
    database,
    ...schema,
    secrets: values.secret,
    path: values.path,
    maxBodyBytes: values['max-body'],
    maxBufferedBytes: values['max-buffered-bytes'],
    maxConnections: values['max-connections'],
    bodyRates: { minBytesPerSecond: values['min-body-rate'], minRateGraceMs: values['min-body-rate-grace'] * 1000 },
    admission: {
      failureBurst: values['failure-burst'],
      failuresPerSecond: values['failure-rate'],
      contentionUtilization: values['contention-busy'] / 100,
      contentionHoldMs: values['contention-hold'] * 1000,
      share: values['client-share'],
    },
    allowUnsigned: values['allow-unsigned'],
    signatureHeader: values['signature-header'],
    eventHeader: values['event-header'],
    logLevel: values['log-level'],
    poolSize: values['pool-size'],
    migrate: !values['no-migrate'],
    ...tokens,
    ...(tls !== undefined && { tls }),
    trustProxy: values['trust-proxy'],
    ...secretFiles(command),
    ...(values['accounts-key-file'] !== undefined && { accountsKeyFile: resolve(values['accounts-key-file']) }),
    destinationsNetwork: networkRulesOf(values, (option) => nameOf(command, option)),
    reconcileEvery: values['reconcile-every'],
    eraseInactiveAfter: values['erase-inactive-after'],
    changesRetention: values['changes-retention'],
    feedStallTimeout: values['feed-stall-timeout'],
    api: { 'api-url': values['api-url'], 'api-key': values['api-key'], 'allow-insecure-api-url': values['allow-insecure-api-url'] },
    printConfig: values['print-config'],
  };
}

/** The secret files given, each with the option or variable that named it, made absolute for the logs of a reload. */
function secretFiles(
  command: ReturnType<typeof serveCommand>,
): Pick<ServeConfig, 'secretFile' | 'tokenFiles' | 'tokenNames' | 'apiKeyFile'> {
  const fileOf = (option: 'secret' | 'api-key' | TokenOption): SecretFile | undefined => {
    const path = command.files[option];
    // The -file options are added by withFileVariants, outside the table's type.
    const source = (command.sources as Record<string, Source | undefined>)[`${option}-file`];
    return path === undefined
      ? undefined
      : { path: resolve(path), from: source === undefined || source.from === 'default' ? `--${option}-file` : source.name };
  };
  const secretFile = fileOf('secret');
  const apiKeyFile = fileOf('api-key');
  return {
    ...(secretFile !== undefined && { secretFile }),
    tokenFiles: Object.fromEntries(
      TOKEN_OPTIONS.flatMap((option) => (command.files[option] === undefined ? [] : [[option, fileOf(option)!]])),
    ),
    tokenNames: Object.fromEntries(TOKEN_OPTIONS.map((option) => [option, nameOf(command, option)])) as Record<TokenOption, string>,
    ...(apiKeyFile !== undefined && { apiKeyFile }),
  };
}

const GUARDS = {
  'dashboard-token': 'it guards candidate data and actions',
  'dashboard-readonly-token': 'it guards candidate data',
  'metrics-token': 'anyone who reaches the port can try tokens',
  'feed-token': 'it guards candidate data',
} as const;

/** The console and metrics tokens: each long enough, and no two alike (a token has one scope). */
function checkedTokens(command: ServeCommand): Pick<ServeConfig, TokenField> {
  return tokensChecked(command.values, (option) => nameOf(command, option));
}

/**
 * The tokens given, each long enough and no two alike; the error names each as `nameOf` says
 * (the flag, the variable, or the file a reload read).
 */
export function tokensChecked(
  values: Partial<Record<keyof typeof GUARDS, string | undefined>>,
  nameOf: (option: keyof typeof GUARDS) => string,
): Pick<ServeConfig, TokenField> {
  const given = (Object.keys(GUARDS) as Array<keyof typeof GUARDS>).filter((option) => values[option] !== undefined);
  for (const option of given) {
    if (values[option]!.length < MIN_TOKEN_LENGTH) {
      throw new UsageError(
        `${nameOf(option)} must be at least ${MIN_TOKEN_LENGTH} characters (${GUARDS[option]}); generate one with \`openssl rand -hex 24\``,
      );
    }
  }
  for (const [i, option] of given.entries()) {
    const same = given.slice(i + 1).find((other) => values[other] === values[option]);
    if (same !== undefined)
      throw new UsageError(`${nameOf(option)} and ${nameOf(same)} must differ: each token opens its own part, so one value cannot be both`);
  }
  const {
    'dashboard-token': dashboardToken,
    'dashboard-readonly-token': dashboardReadonlyToken,
    'metrics-token': metricsToken,
    'feed-token': feedToken,
  } = values;
  return {
    ...(dashboardToken !== undefined && { dashboardToken }),
    ...(dashboardReadonlyToken !== undefined && { dashboardReadonlyToken }),
    ...(metricsToken !== undefined && { metricsToken }),
    ...(feedToken !== undefined && { feedToken }),
  };
}

/** Both TLS files or neither: a certificate without its key (or the reverse) is a usage error. */
function tlsFiles(command: ServeCommand): TlsFiles | undefined {
  const cert = command.values['tls-cert'];
  const key = command.values['tls-key'];
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined) throw new UsageError(`${nameOf(command, 'tls-key')} needs --tls-cert (or PREQUAL_HOOKS_TLS_CERT) too`);
  if (key === undefined) throw new UsageError(`${nameOf(command, 'tls-cert')} needs --tls-key (or PREQUAL_HOOKS_TLS_KEY) too`);
  // Absolute, so that the logs of a reload say which files, whatever the working directory.
  return { cert: resolve(cert), key: resolve(key), from: { cert: nameOf(command, 'tls-cert'), key: nameOf(command, 'tls-key') } };
}

function nameOf(command: ServeCommand, option: keyof typeof SERVE_OPTIONS): string {
  const source = command.sources[option];
  return source.from === 'default' ? `--${option}` : source.name;
}

/** `serve --print-config`: every option's effective value and where it came from, secrets masked. */
export function serveConfigDump(command: ServeCommand): Record<string, { value: unknown; from: string }> {
  return configurationDump(SERVE_OPTIONS, command);
}
