import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { activeSpanIds, activeTracing } from './tracing/otel.js';

// Defence in depth: nothing in prequal-hooks logs these, and if a caller's object ever carries
// them, pino replaces them before the line is written.
const PII_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'phone_number'];
const TOP_LEVEL_PATHS = ['secret', 'secrets', 'signature', 'raw', 'body', ...PII_FIELDS];
const REDACTED_PATHS = [
  ...TOP_LEVEL_PATHS,
  'headers["x-service-signature"]',
  'req.headers["x-service-signature"]',
  ...PII_FIELDS.map((f) => `*.${f}`),
  ...PII_FIELDS.map((f) => `data.${f}`),
];
const CENSOR = '[redacted]';

export type { Logger };

/** Bytes of log lines held before they are written: about twenty access-log lines a write. */
const BATCH_BYTES = 4096;
/** The longest a line waits in memory when traffic is too low to fill a batch. */
const BATCH_WAIT_MS = 1000;
/** pino's level number of warn: lines at it and above are written at once. */
const WARN = 40;

export interface LogDestination extends DestinationStream {
  /** Writes what is held, at once (synchronously). */
  flush(done?: (error?: Error) => void): void;
  /** Writes what is held and stops the timer; the destination's file descriptor stays open. */
  end(): void;
}

/**
 * JSON lines to a file descriptor (1: stdout), written in batches of about 4 KB on the main thread,
 * which costs one write(2) for some twenty access-log lines instead of one each through libuv's
 * pool. A warn, error or fatal line is written at once with whatever is held before it, so that
 * the line before a crash is out; the rest waits at most a second. On the process's exit
 * (process.exit, an uncaught exception) what is held is written; a kill -9 loses it, at most a
 * second of info lines: access-log lines, while what was stored is in the inbox (README, Logs).
 */
export function logDestination(fd = 1): LogDestination {
  const sonic = pino.destination({ dest: fd, sync: true, minLength: BATCH_BYTES });
  // Set by a line, cleared by a flush: a quiet second costs no write(2).
  let held = false;
  const flush = () => {
    if (!held) return;
    held = false;
    sonic.flush();
  };
  const timer = setInterval(flush, BATCH_WAIT_MS);
  timer.unref();
  process.on('exit', flush);
  const destination = {
    [pino.symbols.needsMetadataGsym]: true,
    lastLevel: 0,
    write(line: string) {
      sonic.write(line);
      held = true;
      if (destination.lastLevel >= WARN) flush();
    },
    flush(done?: (error?: Error) => void) {
      flush();
      done?.();
    },
    end() {
      clearInterval(timer);
      process.off('exit', flush);
      flush();
    },
  };
  return destination;
}

/**
 * A pino logger with prequal-hooks' redaction; JSON lines to `destination` (stdout by default).
 * With OpenTelemetry tracing on (a tracer provider registered before), each line written within
 * a span carries its `trace_id` and `span_id`.
 */
export function createLogger(options: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const tracing = activeTracing();
  const config: LoggerOptions = {
    name: 'prequal-hooks',
    level: 'info',
    ...(tracing !== undefined && { mixin: () => activeSpanIds(tracing.api) }),
    ...options,
    redact: { paths: REDACTED_PATHS, censor: CENSOR },
  };
  return destination === undefined ? pino(config) : pino(config, destination);
}

/**
 * The logger of the access log, a line a request: `logger` with redaction of top-level keys only.
 * A `*.` path makes pino pass every value of every line through the redactor (some 9 µs a line,
 * bench/log-line.ts); the access-log line holds only scalars of prequal-hooks' own making (status,
 * outcome, kind, account, inbox id, client address, time), never a body, a header or an object to
 * look into, and a top-level key named like a secret or a PII field is still censored.
 */
export function accessLogger(logger: Logger): Logger {
  return logger.child({}, { redact: { paths: TOP_LEVEL_PATHS, censor: CENSOR } });
}
