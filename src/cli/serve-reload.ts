// serve's SIGHUP: the files that hold secrets (webhook secrets, console and metrics tokens, the
// agency's API key) and the TLS pair are read again, each on its own. What cannot be read keeps
// what is in use, with an error naming the file and the option or variable that gave it.
import type { Client } from '../client/client.js';
import type { Logger } from '../logging.js';
import type { Standalone } from '../standalone/start-standalone.js';
import { secretFingerprint } from '../signature.js';
import { count } from '../words.js';
import { looseFileWarning, readSecretLine, readSecretLines, type SecretFile } from './file-variants.js';
import { tokensChecked, WEAK_SECRET_LENGTH, type ServeConfig, type TokenOption } from './serve-options.js';
import { serviceClient } from './service.js';
import { readTlsPair, type TlsFiles } from './tls-files.js';

/** The client reconciliation runs with: swapped when SIGHUP re-reads the API key. */
export interface Reconciling {
  client: Client;
}

const TOKEN_HOLDS: Record<TokenOption, string> = {
  'dashboard-token': 'the console token',
  'dashboard-readonly-token': 'the read-only console token',
  'metrics-token': 'the metrics token',
  'feed-token': 'the feed token',
};

/** Each file given that holds a secret, and what it holds. */
function secretFilesOf(config: ServeConfig): Array<{ file: SecretFile; holds: string }> {
  return [
    ...(config.secretFile === undefined ? [] : [{ file: config.secretFile, holds: 'the webhook secrets' }]),
    ...Object.entries(config.tokenFiles).map(([option, file]) => ({ file, holds: TOKEN_HOLDS[option as TokenOption] })),
    ...(config.apiKeyFile === undefined ? [] : [{ file: config.apiKeyFile, holds: "the agency's API key" }]),
    ...(config.tls === undefined
      ? []
      : [{ file: { path: config.tls.key, from: config.tls.from?.key ?? '--tls-key' }, holds: 'the TLS private key' }]),
  ];
}

/** A warning for each file holding a secret that other users can read: at start, and at each SIGHUP. */
export function warnLooseFiles(config: ServeConfig, logger: Logger, prefix = ''): void {
  for (const { file, holds } of secretFilesOf(config)) {
    const warning = looseFileWarning(file, holds);
    if (warning !== undefined) logger.warn({ file: file.path }, `${prefix}${warning}`);
  }
}

/**
 * SIGHUP re-reads the secret file, the token files, the API key file and the TLS pair, each on
 * its own: connections and requests in flight are untouched. Returns what removes the handler.
 */
export function reloadOnHangup(
  config: ServeConfig,
  running: { standalone: Standalone; reconciling: Reconciling | undefined },
  logger: Logger,
): () => void {
  const { standalone, reconciling } = running;
  const reload = () => {
    if (secretFilesOf(config).length === 0) {
      logger.warn('SIGHUP: nothing to re-read (no --secret-file, no token file, no --api-key-file, no --tls-cert); nothing changed');
      return;
    }
    warnLooseFiles(config, logger, 'SIGHUP: ');
    if (config.secretFile !== undefined) reloadSecrets(config, config.secretFile, standalone, logger);
    if (Object.keys(config.tokenFiles).length > 0) void reloadTokens(config, standalone, logger);
    if (config.apiKeyFile !== undefined) reloadApiKey(config, config.apiKeyFile, reconciling, logger);
    if (config.tls !== undefined) reloadTls(config.tls, standalone, logger);
  };
  // Without a handler, SIGHUP's default action would end the process.
  process.on('SIGHUP', reload);
  return () => process.off('SIGHUP', reload);
}

function reloadSecrets(config: ServeConfig, file: SecretFile, standalone: Standalone, logger: Logger): void {
  try {
    const secrets = readSecretLines(file.path, file.from);
    standalone.receiver.setSecrets(secrets);
    config.secrets = secrets;
    const weak = secrets.filter((secret) => secret.length < WEAK_SECRET_LENGTH).map(secretFingerprint);
    if (weak.length > 0)
      logger.warn({ weakSecretFingerprints: weak }, `SIGHUP: ${count(weak.length, 'secret')} under ${WEAK_SECRET_LENGTH} characters: weak`);
    logger.info({ secretFingerprints: secrets.map(secretFingerprint) }, `SIGHUP: webhook secrets re-read from ${file.path}`);
  } catch (error) {
    logger.error({ file: file.path }, `SIGHUP: ${(error as Error).message}; the secrets in use are kept`);
  }
}

/** The token files read again, checked as at start, and swapped in together; on any error none is. */
async function reloadTokens(config: ServeConfig, standalone: Standalone, logger: Logger): Promise<void> {
  const files = config.tokenFiles;
  const paths = Object.values(files).map((file) => file.path);
  try {
    const read = Object.fromEntries(Object.entries(files).map(([option, file]) => [option, readSecretLine(file.path, file.from, option)]));
    const current = {
      'dashboard-token': config.dashboardToken,
      'dashboard-readonly-token': config.dashboardReadonlyToken,
      'metrics-token': config.metricsToken,
      'feed-token': config.feedToken,
    };
    const tokens = tokensChecked({ ...current, ...read }, (option) => config.tokenNames[option]);
    await standalone.setTokens(tokens);
    Object.assign(config, {
      dashboardToken: tokens.dashboardToken,
      dashboardReadonlyToken: tokens.dashboardReadonlyToken,
      metricsToken: tokens.metricsToken,
      feedToken: tokens.feedToken,
    });
    logger.info({ files: paths }, 'SIGHUP: tokens re-read; requests from now on are checked against them');
  } catch (error) {
    logger.error({ files: paths }, `SIGHUP: ${(error as Error).message}; the tokens in use are kept`);
  }
}

/** The API key read again; reconciliation's next run uses it (a run in progress ends with the old one). */
function reloadApiKey(config: ServeConfig, file: SecretFile, reconciling: Reconciling | undefined, logger: Logger): void {
  try {
    const key = readSecretLine(file.path, file.from, 'api-key');
    if (reconciling !== undefined) reconciling.client = serviceClient({ ...config.api, 'api-key': key }, '--reconcile-every').client;
    config.api['api-key'] = key;
    const use = reconciling === undefined ? 'nothing uses it without --reconcile-every' : 'reconciliation uses it from its next run';
    logger.info({ file: file.path }, `SIGHUP: API key re-read from ${file.path}; ${use}`);
  } catch (error) {
    logger.error({ file: file.path }, `SIGHUP: ${(error as Error).message}; the API key in use is kept`);
  }
}

function reloadTls(tls: TlsFiles, standalone: Standalone, logger: Logger): void {
  try {
    standalone.setTls(readTlsPair(tls));
    logger.info({ cert: tls.cert }, 'SIGHUP: TLS certificate and key re-read; new connections use them');
  } catch (error) {
    logger.error({ cert: tls.cert, key: tls.key }, `SIGHUP: ${(error as Error).message}; the certificate in use is kept`);
  }
}
