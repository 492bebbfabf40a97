import { createRequire } from 'node:module';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createLogger, logDestination, type Logger } from '../logging.js';
import { startStandalone, type Standalone } from '../standalone/start-standalone.js';
import type { ReceiverOptions } from '../receiver/options.js';
import { isPostgresUrl, openStore } from '../store/open.js';
import type { StoreHandle } from '../store/handle.js';
import type { SettingsPort } from '../store/write-ports.js';
import { displayLocation } from './database.js';
import { generatedSecret } from '../store/settings.js';
import { secretFingerprint } from '../signature.js';
import { serviceClient } from './service.js';
import type { CommandIo } from './args.js';
import { printJson } from './output.js';
import { count } from '../words.js';
import {
  SERVE_ACCEPTED_OPTIONS,
  serveCommand,
  serveConfig,
  serveConfigDump,
  SERVE_HELP,
  WEAK_SECRET_LENGTH,
  type ServeConfig,
} from './serve-options.js';
import { defineCommand } from './command.js';
import { reloadOnHangup, warnLooseFiles, type Reconciling } from './serve-reload.js';
import { readTlsPair, type TlsPair } from './tls-files.js';
import { startTracing, type TracingSdk } from './tracing.js';

export { SERVE_HELP };

function warnShortSecrets(secrets: readonly string[], io: CommandIo): void {
  for (const secret of secrets) {
    if (secret.length >= WEAK_SECRET_LENGTH) continue;
    io.stderr.write(
      `prequal-hooks serve: WARNING: a webhook secret of ${secret.length} characters (fingerprint ${secretFingerprint(secret)}) is weak: ` +
        `anyone holding one signed request can try guesses offline. Use ${WEAK_SECRET_LENGTH} characters or more (\`openssl rand -hex 24\`), in the dashboard and here.\n`,
    );
  }
}

/** Binds and releases the address, so that EADDRINUSE or a bad host is known before anything is created. */
async function checkListenable(port: number, host: string): Promise<void> {
  const probe = createNetServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

function loggerFor(io: CommandIo, level: string): Logger {
  // Pretty only for a person at a terminal; JSON lines for everything else.
  const pretty = (io.stdout as { isTTY?: boolean }).isTTY === true ? prettyTarget(io) : undefined;
  if (pretty !== undefined) {
    return createLogger({ level }, pino.transport({ target: pretty, options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } }));
  }
  return createLogger({ level }, logDestination(1));
}

/**
 * pino-pretty's path, or undefined (one line says how to get it) when it is not installed: it is
 * a development nicety, not a dependency, so a terminal without it gets the JSON lines.
 */
function prettyTarget(io: CommandIo): string | undefined {
  try {
    return createRequire(import.meta.url).resolve('pino-pretty');
  } catch {
    io.stderr.write(
      'prequal-hooks serve: logging JSON lines; for readable logs at a terminal, `npm install pino-pretty` beside prequal-hooks.\n',
    );
    return undefined;
  }
}

/**
 * `prequal-hooks serve`: the options resolved once into a ServeConfig, then the steps in order:
 * check the address, open the store, listen, start background work, install signal handling,
 * announce. Each step is a function below.
 */
export const serve = defineCommand({
  options: SERVE_ACCEPTED_OPTIONS,
  help: SERVE_HELP,
  async run(parsed, io) {
    const command = serveCommand(parsed);
    for (const warning of command.removed) io.stderr.write(`prequal-hooks serve: WARNING: ${warning}\n`);
    const config = serveConfig(command);
    if (config.printConfig) {
      printJson(io, serveConfigDump(command));
      return 0;
    }
    const reconciling: Reconciling | undefined =
      config.reconcileEvery > 0 ? { client: serviceClient(config.api, '--reconcile-every').client } : undefined;
    // A wrong certificate or key is said before anything is opened or bound.
    const tls = config.tls === undefined ? undefined : readTlsPair(config.tls);
    // Before the logger and the receiver: both decide once whether to trace.
    const tracing = await startTracing(io.env, io);
    const logger = loggerFor(io, config.logLevel);
    warnShortSecrets(config.secrets, io);
    warnLooseFiles(config, logger);
    // A port in use or a wrong --host fails here, before a database file is created for nothing.
    await checkListenable(config.port, config.host);
    const database = await openStore(config.database, {
      logger,
      poolSize: config.poolSize,
      migrate: config.migrate,
      ...(config.schema !== undefined && { schema: config.schema }),
    });
    let standalone: Standalone;
    try {
      standalone = await listen(config, { tls, reconciling }, database, logger, io);
    } catch (error) {
      await database.close();
      throw error;
    }
    // Signal handlers before the address is announced: from then on a SIGTERM must drain, and
    // without a handler the default action would kill the process outright.
    const stopReloading = reloadOnHangup(config, { standalone, reconciling }, logger);
    const stopped = stopOnSignal({ standalone, database, tracing, logger }).finally(stopReloading);
    announce(config, standalone, await servedAccounts(standalone), logger, io);
    return await stopped;
  },
});

/** Starts the receiver and its HTTP server; a generated secret is stored and shown only once it listens. */
async function listen(
  config: ServeConfig,
  { tls, reconciling }: { tls: TlsPair | undefined; reconciling: Reconciling | undefined },
  database: StoreHandle & SettingsPort,
  logger: Logger,
  io: CommandIo,
): Promise<Standalone> {
  if (config.allowUnsigned) {
    logger.warn(
      'UNSIGNED EVENTS ARE ACCEPTED (--allow-unsigned): anyone who can reach this port can write events. Configure a secret in production.',
    );
  }
  return await startStandalone({
    database,
    // A start that fails (a wrong --host, a port in use) shows nothing it would not show again.
    secrets: async () =>
      config.secrets.length > 0 || config.allowUnsigned ? config.secrets : [await generatedSecretShown(config, database, io)],
    allowUnsigned: config.allowUnsigned,
    maxBodyBytes: config.maxBodyBytes,
    maxBufferedBytes: config.maxBufferedBytes,
    maxConnections: config.maxConnections,
    bodyRates: config.bodyRates,
    admission: config.admission,
    signatureHeader: config.signatureHeader,
    eventHeader: config.eventHeader,
    logger,
    port: config.port,
    host: config.host,
    path: config.path,
    ...(config.dashboardToken !== undefined && { dashboardToken: config.dashboardToken }),
    ...(config.dashboardReadonlyToken !== undefined && { dashboardReadonlyToken: config.dashboardReadonlyToken }),
    ...(config.metricsToken !== undefined && { metricsToken: config.metricsToken }),
    ...(config.feedToken !== undefined && { feedToken: config.feedToken }),
    feedStallTimeoutMs: config.feedStallTimeout,
    ...(tls !== undefined && { tls }),
    trustProxy: config.trustProxy,
    accounts: {
      ...(config.accountsKeyFile !== undefined && { keyFile: config.accountsKeyFile }),
      ...(!isPostgresUrl(config.database) && { databaseFile: config.database }),
    },
    ...backgroundOptions(config, reconciling),
  });
}

/** What the receiver runs beside the intake, as the options say: destinations, retention of changes and of people, reconciliation. */
function backgroundOptions(config: ServeConfig, reconciling: Reconciling | undefined): Partial<ReceiverOptions> {
  return {
    destinations: { network: config.destinationsNetwork },
    changesRetention: config.changesRetention,
    ...(config.eraseInactiveAfter > 0 && { eraseInactiveAfter: config.eraseInactiveAfter }),
    ...(reconciling !== undefined && {
      reconcile: {
        every: config.reconcileEvery * 60_000,
        // Each run takes the client of the moment: SIGHUP may have re-read the API key since the last.
        client: () => reconciling.client,
        accounts: { baseUrl: config.api['api-url']!, allowInsecureHttp: config.api['allow-insecure-api-url'] === true },
      },
    }),
  };
}

/** The secret generated at the first start (stored in the database), said once; its fingerprint later. */
async function generatedSecretShown(config: ServeConfig, database: SettingsPort, io: CommandIo): Promise<string> {
  const generated = await generatedSecret(database);
  if (generated.created) {
    io.stderr.write(
      `\nNo webhook secret was given, so one was generated and stored in ${displayLocation(config.database)}:\n\n` +
        `    ${generated.secret}\n\n` +
        'Paste it in the agency dashboard (API section, Webhooks tab) as the shared secret.\n' +
        'Later starts with this database reuse it. It is shown once; `prequal-hooks secret --db <path>` shows it again.\n\n',
    );
  } else {
    io.stderr.write(
      `Using the webhook secret generated on ${generated.since} (fingerprint ${secretFingerprint(generated.secret)}); ` +
        '`prequal-hooks secret --db <path>` shows it.\n',
    );
  }
  config.secrets = [generated.secret];
  return generated.secret;
}

/** SIGTERM or SIGINT: stop accepting, finish requests in flight, drain, close; exit 1 past 15 s. */
function stopOnSignal(running: {
  standalone: Standalone;
  database: StoreHandle;
  tracing: TracingSdk | undefined;
  logger: Logger;
}): Promise<number> {
  const { standalone, database, tracing, logger } = running;
  return new Promise<number>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing requests in flight and draining');
      // The lines held so far are out now, not with the last one at exit.
      logger.flush();
      const force = setTimeout(() => {
        logger.error('did not stop within 15 s; exiting');
        done(1);
      }, 15_000);
      force.unref();
      // The receiver's close stops its background work too, waiting for deliveries in flight.
      void standalone
        .close(10_000)
        .then(async () => {
          await database.close();
          // The last spans exported (bounded by the 15 s above); an unreachable collector loses only them.
          await tracing
            ?.shutdown()
            .catch((error: unknown) => logger.warn({ err: { message: (error as Error).message } }, 'could not export the last traces'));
          logger.info('stopped');
          // Every line written before the exit (a reader that does not read gets 2 s).
          await new Promise<void>((written) => {
            setTimeout(written, 2000).unref();
            logger.flush(() => written());
          });
          clearTimeout(force);
          done(0);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'error while stopping');
          done(1);
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

/** How many accounts serve takes deliveries for (the default one and the registry's active ones), and how many are disabled. */
async function servedAccounts(standalone: Standalone): Promise<{ active: number; disabled: number } | undefined> {
  try {
    const listed = (await (await standalone.receiver.accounts())?.list()) ?? [{ state: 'active' }];
    const active = listed.filter((a) => a.state === 'active').length;
    return { active, disabled: listed.length - active };
  } catch {
    return undefined; // the registry unreadable: the receiver says why, and its account paths answer 503
  }
}

/** `3 accounts`, and `(1 more disabled)` when some are. */
function accountsText(served: { active: number; disabled: number }): string {
  return `${count(served.active, 'account')}${served.disabled > 0 ? ` (${served.disabled} more disabled)` : ''}`;
}

/**
 * For the person at the terminal, whatever the log level; the JSON line is for log pipelines.
 * Both say what is bound, and where to reach it from this machine.
 */
function announce(
  config: ServeConfig,
  standalone: Standalone,
  served: { active: number; disabled: number } | undefined,
  logger: Logger,
  io: CommandIo,
): void {
  const bound = standalone.server.address() as AddressInfo;
  const boundText = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  const everywhere = bound.address === '0.0.0.0' || bound.address === '::';
  const where = displayLocation(config.database);
  io.stderr.write(
    `prequal-hooks: listening on ${boundText}${everywhere ? ' (every interface)' : ''}; receiving webhooks on POST ${standalone.url}${config.path}` +
      `${everywhere ? ' from this machine, or on this port at its other addresses' : ''} (database ${where}${served === undefined ? '' : `, ${accountsText(served)}`})\n`,
  );
  if (everywhere) {
    io.stderr.write('prequal-hooks: other machines can reach this port; --host 127.0.0.1 (or PREQUAL_HOOKS_HOST) keeps it to this one.\n');
  }
  logger.info(
    {
      listening: boundText,
      url: `${standalone.url}${config.path}`,
      db: where,
      secretFingerprints: config.secrets.map(secretFingerprint),
      maxBodyBytes: config.maxBodyBytes,
      ...(served !== undefined && { accounts: served }),
    },
    `prequal-hooks listening on ${boundText}, receiving webhooks on POST ${standalone.url}${config.path}` +
      (served === undefined ? '' : ` for ${accountsText(served)}`),
  );
  // Out now, not with the first batch: whoever waits for the start reads it at once.
  logger.flush();
}
