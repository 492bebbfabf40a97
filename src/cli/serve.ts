import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createLogger, type Logger } from '../logging.js';
import { DEFAULT_EVENT_HEADER, DEFAULT_MAX_BODY_BYTES, DEFAULT_SIGNATURE_HEADER } from '../receive/intake.js';
import { startStandalone } from '../server.js';
import { MIN_TOKEN_LENGTH } from '../console/auth.js';
import { openStore } from '../store/open.js';
import { displayLocation } from './database.js';
import { generatedSecret } from '../store/settings.js';
import { secretFingerprint } from '../signature.js';
import { parseArgs } from 'node:util';
import type { Client } from '../client/client.js';
import { SERVICE_FLAGS, serviceClient } from './service.js';
import { scheduleReconcile } from '../reconcile/index.js';
import { byteSize, databasePath, DB_FLAG, DEFAULT_DB, HELP_FLAG, integer, parsed, secretList, UsageError, type CommandIo } from './args.js';

export const SERVE_HELP = `Usage: prequal-hooks serve [options]

Runs the standalone webhook receiver: verifies each request, stores it in SQLite before
answering 2xx, and projects campaigns, candidates and credits.

Options (environment fallback in brackets):
  --port <n>              port to listen on [PORT] (default 8787)
  --host <addr>           address to listen on (default 0.0.0.0)
  --db <path|url>         SQLite file (folder created) or postgres:// URL [PREQUAL_HOOKS_DB]
                          (default ${DEFAULT_DB})
  --secret <s>            shared secret from the agency dashboard [PREQUAL_HOOKS_SECRET];
                          repeat it or separate with commas during a rotation
  --path <p>              webhook route (default /webhooks)
  --max-body <size>       largest body, e.g. 1mb or 262144 (default 1mb)
  --allow-unsigned        accept unsigned events (only without a secret; anyone can then post events)
  --signature-header <h>  default ${DEFAULT_SIGNATURE_HEADER}
  --event-header <h>      default ${DEFAULT_EVENT_HEADER}
  --log-level <level>     trace, debug, info, warn, error (default info)
  --pool-size <n>         PostgreSQL: connections in the pool (default 10)
  --schema <name>         PostgreSQL: schema of the tables (default public)
  --dashboard-token <t>   serve the console at /dashboard and GET /metrics (Prometheus) to
                          requests carrying this token (16 characters or more), as HTTP Basic
                          password or Bearer [PREQUAL_HOOKS_DASHBOARD_TOKEN]; without it neither
                          is served
  --reconcile-every <m>   every <m> minutes, repair what webhooks missed from the service's API
                          (see "prequal-hooks reconcile --help"); needs the two below
  --api-url <url>         the service's address, for --reconcile-every [PREQUAL_HOOKS_API_URL]
  --api-key <key>         the agency's API key, for --reconcile-every [PREQUAL_HOOKS_API_KEY]
                          (prefer the environment: flags show in the process list)
  --allow-insecure-api-url  accept a plain http:// --api-url on another host than this
                          machine: the key then crosses the network readable
                          [PREQUAL_HOOKS_ALLOW_INSECURE_API_URL=1]
  -h, --help              show this help

PREQUAL_HOOKS_SQLITE_THREAD=1 runs a SQLite database's connection in a worker thread (commits
and fsyncs off the event loop); it is off by default, as it measured no faster on 2 cores.

With no secret and no --allow-unsigned, a strong secret is generated once, kept in the
database and reused at later starts: paste it in the agency dashboard (API section, Webhooks tab).

Also served: GET /healthz (process up) and GET /readyz (database writable, handlers keeping up);
with a dashboard token, the operator console at /dashboard.
SIGTERM or SIGINT stops accepting, finishes requests in flight, drains and exits 0.`;

function loggerFor(io: CommandIo, level: string): Logger {
  if ((io.stdout as { isTTY?: boolean }).isTTY) {
    // Pretty only for a person at a terminal; JSON lines for everything else.
    return createLogger({ level }, pino.transport({ target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } }));
  }
  return createLogger({ level }, pino.destination({ dest: 1, sync: false }));
}

export async function serve(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parsed(() =>
    parseArgs({
      args: argv,
      strict: true,
      options: {
        ...HELP_FLAG,
        ...DB_FLAG,
        port: { type: 'string' },
        host: { type: 'string' },
        secret: { type: 'string', multiple: true },
        path: { type: 'string' },
        'max-body': { type: 'string' },
        'allow-unsigned': { type: 'boolean' },
        'signature-header': { type: 'string' },
        'event-header': { type: 'string' },
        'log-level': { type: 'string' },
        'pool-size': { type: 'string' },
        'dashboard-token': { type: 'string' },
        schema: { type: 'string' },
        'reconcile-every': { type: 'string' },
        ...SERVICE_FLAGS,
      },
    }),
  );
  if (values.help) {
    io.stdout.write(`${SERVE_HELP}\n`);
    return 0;
  }
  const port = integer('--port', values.port ?? io.env.PORT, 8787, 0, 65535);
  const dbPath = databasePath(values.db, io.env);
  const path = values.path ?? '/webhooks';
  if (!path.startsWith('/')) throw new UsageError(`--path must start with "/", got "${path}"`);
  const maxBodyBytes = byteSize('--max-body', values['max-body'], DEFAULT_MAX_BODY_BYTES);
  const level = values['log-level'] ?? 'info';
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(level)) {
    throw new UsageError(`--log-level must be one of trace, debug, info, warn, error, got "${level}"`);
  }
  let secrets = secretList([...(values.secret ?? []), io.env.PREQUAL_HOOKS_SECRET]);
  const allowUnsigned = values['allow-unsigned'] === true;
  if (allowUnsigned && secrets.length > 0) {
    throw new UsageError('--allow-unsigned cannot be combined with a secret: signed receivers verify every request');
  }

  const reconcileEvery = values['reconcile-every'] === undefined ? 0 : Number(values['reconcile-every']);
  if (!(reconcileEvery >= 0.05 && reconcileEvery <= 7 * 24 * 60) && values['reconcile-every'] !== undefined) {
    throw new UsageError(`--reconcile-every must be a number of minutes from 0.05 to 10080, got "${values['reconcile-every']}"`);
  }
  let client: Client | undefined;
  if (reconcileEvery > 0) client = serviceClient(values, io, '--reconcile-every').client;

  const logger = loggerFor(io, level);
  const poolSize = integer('--pool-size', values['pool-size'], 10, 2, 1000);
  const dashboardToken = values['dashboard-token'] ?? (io.env.PREQUAL_HOOKS_DASHBOARD_TOKEN || undefined);
  if (dashboardToken !== undefined && dashboardToken.length < MIN_TOKEN_LENGTH) {
    throw new UsageError(`--dashboard-token must be at least ${MIN_TOKEN_LENGTH} characters (it guards candidate data and actions); generate one with \`openssl rand -hex 24\``);
  }
  const database = await openStore(dbPath, { logger, poolSize, thread: io.env.PREQUAL_HOOKS_SQLITE_THREAD === '1', ...(values.schema !== undefined && { schema: values.schema }) });
  // A generated secret is stored and shown only once the server listens: a start that fails
  // (a wrong --host, a port in use) shows nothing it would not show again.
  const resolveSecrets = async (): Promise<string[]> => {
    if (secrets.length > 0 || allowUnsigned) return secrets;
    const generated = await generatedSecret(database);
    if (generated.created) {
      io.stderr.write(
        `\nNo webhook secret was given, so one was generated and stored in ${displayLocation(dbPath)}:\n\n` +
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
    secrets = [generated.secret];
    return secrets;
  };
  if (allowUnsigned) {
    logger.warn('UNSIGNED EVENTS ARE ACCEPTED (--allow-unsigned): anyone who can reach this port can write events. Configure a secret in production.');
  }

  let standalone;
  try {
    standalone = await startStandalone({
    database,
    secrets: resolveSecrets,
    allowUnsigned,
    maxBodyBytes,
    signatureHeader: values['signature-header'] ?? DEFAULT_SIGNATURE_HEADER,
    eventHeader: values['event-header'] ?? DEFAULT_EVENT_HEADER,
    logger,
    port,
    host: values.host ?? '0.0.0.0',
    path,
    ...(dashboardToken !== undefined && { dashboardToken }),
  });
  } catch (error) {
    await database.close();
    throw error;
  }
  const running = standalone;
  const schedule =
    client === undefined
      ? undefined
      : scheduleReconcile({ everyMs: reconcileEvery * 60_000, logger, run: (signal) => running.receiver.reconcile({ client, signal }) });
  // Signal handlers before the address is announced: from then on a SIGTERM must drain, and
  // without a handler the default action would kill the process outright.
  const stopped = new Promise<number>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing requests in flight and draining');
      const force = setTimeout(() => {
        logger.error('did not stop within 15 s; exiting');
        done(1);
      }, 15_000);
      force.unref();
      void (schedule?.stop(3000) ?? Promise.resolve())
        .then(() => standalone.close(10_000))
        .then(async () => {
          await database.close();
          logger.info('stopped');
          logger.flush?.();
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

  // For the person at the terminal, whatever the log level; the JSON line below is for log
  // pipelines. Both say what is bound, and where to reach it from this machine.
  const bound = standalone.server.address() as AddressInfo;
  const boundText = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  const everywhere = bound.address === '0.0.0.0' || bound.address === '::';
  io.stderr.write(
    `prequal-hooks: listening on ${boundText}${everywhere ? ' (every interface)' : ''}; receiving webhooks on POST ${standalone.url}${path}` +
      `${everywhere ? ' from this machine, or on this port at its other addresses' : ''} (database ${displayLocation(dbPath)})\n`,
  );
  logger.info(
    { listening: boundText, url: `${standalone.url}${path}`, db: displayLocation(dbPath), secretFingerprints: secrets.map(secretFingerprint), maxBodyBytes },
    `prequal-hooks listening on ${boundText}, receiving webhooks on POST ${standalone.url}${path}`,
  );
  return await stopped;
}
