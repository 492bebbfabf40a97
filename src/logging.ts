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
/** The most held while the log's reader does not keep up; lines past it are dropped, and counted. */
const HELD_BYTES_MAX = 16 * 1024 * 1024;
/** pino's level number of warn: lines at it and above are handed to the system at once. */
const WARN = 40;

export interface LogDestination extends DestinationStream {
  /** Hands what is held to the system; `done` once all of it is written (never, if writing fails: callers bound the wait). */
  flush(done?: (error?: Error) => void): void;
  /** Lines dropped so far because the log's reader did not keep up. */
  readonly dropped: number;
}

/**
 * JSON lines to a file descriptor (1: stdout) through pino's own sonic-boom, asynchronously, in
 * batches of about 4 KB: one write(2) on libuv's pool for some twenty access-log lines instead of
 * one each, and never on the event loop, so a log reader that stalls (a full pipe, a stuck
 * collector) never stalls the receiver. What waits is bounded (16 MiB): past it lines are dropped,
 * counted, and a warn line says how many once the reader catches up. A warn, error or fatal line
 * is handed to the system at once with whatever is held before it; the rest waits about a second
 * at most (the wait, plus the one write that may be on its way when it ends). On exit
 * (process.exit, an uncaught exception) what is held is written synchronously (pino registers it).
 * A kill -9 loses what is held: at most a second of info lines, that is access-log lines, while
 * what was stored is in the inbox (docs/logs-and-traces.md, Logs).
 *
 * sonic-boom does the batching (`minLength`), the cap and its drops (`maxLength`, 'drop'), the
 * wait (`periodicFlush`), the retries of a full pipe (EAGAIN, every 100 ms) and, through pino,
 * the write at exit. What is left here is what it lacks:
 * - a flush that ends: sonic-boom's flush, asked while a write is on its way, writes nothing more,
 *   and its `flush(cb)` calls back when that write ends with what came since still held (below
 *   4 KB, it waits for the next batch or tick), after an fsync that fails on a pipe (EINVAL). So
 *   the bytes handed over and not yet written are counted ('write', 'drop'), the flush is asked
 *   again at each 'drain' while any are held, and `done` is called once none are;
 * - the count of dropped lines and the line that reports it: sonic-boom only emits each one;
 * - warn and above at once: sonic-boom knows nothing of levels.
 */
export function logDestination(fd = 1, { waitMs = BATCH_WAIT_MS }: { waitMs?: number } = {}): LogDestination {
  const sonic = pino.destination({
    dest: fd,
    sync: false,
    minLength: BATCH_BYTES,
    maxLength: HELD_BYTES_MAX,
    periodicFlush: waitMs,
  });
  // A reader gone for good (a closed descriptor, a broken pipe) makes sonic-boom emit 'error',
  // which unheard would end the process: serve goes on, and the lines are lost.
  sonic.on('error', () => undefined);
  let held = 0;
  let wanted = false;
  const waiting: Array<(error?: Error) => void> = [];
  let dropped = 0;
  let told = 0;
  /** The line saying how many lines were dropped, once there is room for it. */
  const report = () => {
    if (dropped === told) return;
    const line = `${JSON.stringify({ level: WARN, time: Date.now(), msg: `${dropped - told} log lines dropped: the log's reader did not keep up` })}\n`;
    if (held + Buffer.byteLength(line) > HELD_BYTES_MAX) return;
    told = dropped;
    write(line);
  };
  sonic.on('write', (n: number) => (held -= n));
  sonic.on('drop', (line: string) => {
    dropped++;
    held -= Buffer.byteLength(line);
  });
  // After each write that leaves less than a batch held: the periodic flush's ticks end here too,
  // so the report of dropped lines goes out within a tick of the reader catching up.
  sonic.on('drain', () => {
    if (held <= 0) report();
    if (held > 0) {
      if (wanted) sonic.flush();
      return;
    }
    wanted = false;
    for (const done of waiting.splice(0)) done();
  });
  const write = (line: string) => {
    held += Buffer.byteLength(line);
    sonic.write(line);
  };
  const flush = (done?: (error?: Error) => void) => {
    report();
    if (done !== undefined) waiting.push(done);
    if (held <= 0) {
      for (const waiter of waiting.splice(0)) waiter();
      return;
    }
    wanted = true;
    sonic.flush();
  };
  const destination = {
    [pino.symbols.needsMetadataGsym]: true,
    lastLevel: 0,
    get dropped() {
      return dropped;
    },
    write(line: string) {
      write(line);
      if (destination.lastLevel >= WARN) flush();
    },
    flush,
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
