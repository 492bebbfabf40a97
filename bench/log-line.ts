#!/usr/bin/env node
// The CPU an access-log line of `prequal-hooks serve` costs: `npm run bench:build && node build/bench/log-line.js`
// (a few seconds; --lines, --rounds, --out <file>, default /dev/null). Each variant logs the line `serve`
// logs for every webhook (the same fields, built the same way), one line an event-loop turn as a server
// does (a request between two lines), to its own file descriptor; the CPU of the whole process
// (process.cpuUsage: the main thread and libuv's pool, where asynchronous writes run) from the first line
// until every line is written, less that of the same loop logging nothing, divided by the lines.
// Variants are measured in turn, in alternating order, in the same run; the median of the rounds is kept.
//   before         the configuration up to 0.4: redaction paths with `*.` wildcards, one write a line
//   before+batch   the same redaction, lines written in 4 KB batches (what batching saves)
//   before-*paths  one write a line, redaction without the `*.` paths (what they cost)
//   shipped        what `serve` makes now (src/logging.ts, from the built dist/)
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino, type DestinationStream, type Logger } from 'pino';
import { distUrl, TMP } from './lib/paths.js';
import { median, round } from './lib/stats.js';

const { values: flags } = parseArgs({
  options: {
    lines: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '5' },
    out: { type: 'string', default: '/dev/null' },
  },
});
const LINES = Number(flags.lines);
const ROUNDS = Number(flags.rounds);

interface LoggingModule {
  createLogger(options: pino.LoggerOptions, destination?: DestinationStream): Logger;
  accessLogger(logger: Logger): Logger;
  logDestination(fd: number): DestinationStream & { flush(done?: (error?: Error) => void): void };
}
const shipped = (await import(distUrl('logging.js'))) as LoggingModule;

// The configuration before: redaction as src/logging.ts had it, to SonicBoom writing each line at once.
const PII_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'phone_number'];
const OLD_PATHS = [
  'secret',
  'secrets',
  'signature',
  'raw',
  'body',
  'headers["x-service-signature"]',
  'req.headers["x-service-signature"]',
  ...PII_FIELDS,
  ...PII_FIELDS.map((f) => `*.${f}`),
  ...PII_FIELDS.map((f) => `data.${f}`),
];
const oldLogger = (destination: DestinationStream) =>
  pino({ name: 'prequal-hooks', level: 'info', redact: { paths: OLD_PATHS, censor: '[redacted]' } }, destination);

interface Made {
  logger: Logger | undefined;
  /** Resolves once every line is written. */
  drained(): Promise<void>;
  end?(): void;
}

const sonic = (fd: number, minLength: number) => {
  const stream = pino.destination({ dest: fd, sync: false, minLength });
  // Without flush(cb), which fsyncs (EINVAL on /dev/null, and no part of a line's cost): write what is
  // held until nothing is (SonicBoom's held byte count is private).
  const held = () =>
    (stream as unknown as { _len: number; _writing: boolean })._len > 0 || (stream as unknown as { _writing: boolean })._writing;
  const drained = async () => {
    while (held()) {
      const drain = once(stream, 'drain');
      stream.flush();
      await drain;
    }
  };
  return { stream, drained };
};

const VARIANTS: Record<string, (fd: number) => Made> = {
  nothing: () => ({ logger: undefined, drained: () => Promise.resolve() }),
  before: (fd) => {
    const s = sonic(fd, 0);
    return { logger: oldLogger(s.stream), drained: s.drained };
  },
  'before+batch': (fd) => {
    const s = sonic(fd, 4096);
    return { logger: oldLogger(s.stream), drained: s.drained };
  },
  'before-*paths': (fd) => {
    const s = sonic(fd, 0);
    const paths = OLD_PATHS.filter((path) => !path.startsWith('*.'));
    return {
      logger: pino({ name: 'prequal-hooks', level: 'info', redact: { paths, censor: '[redacted]' } }, s.stream),
      drained: s.drained,
    };
  },
  shipped: (fd) => {
    const stream = shipped.logDestination(fd);
    return {
      logger: shipped.accessLogger(shipped.createLogger({ level: 'info' }, stream)),
      // Resolves once everything is written (its fsync's EINVAL on /dev/null is no part of a line's cost).
      drained: () => new Promise<void>((resolve) => stream.flush(() => resolve())),
    };
  },
};

/** The line of src/standalone/start-standalone.ts accessLogged, built the same way. */
function accessLine(logger: Logger, i: number, startedAt: bigint): void {
  const trace = undefined as { trace_id: string; span_id: string } | undefined;
  logger.info(
    {
      ...trace,
      status: 200,
      client: '127.0.0.1',
      outcome: i % 50 === 0 ? 'duplicate' : 'stored',
      account: 'default',
      kind: 'lead.created',
      duplicate: i % 50 === 0,
      inboxId: 1000 + i,
      ms: Number(process.hrtime.bigint() - startedAt) / 1e6,
    },
    'webhook',
  );
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** CPU µs for `lines` lines, one an event-loop turn, until written. */
async function measure(made: Made, lines: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < lines; i++) {
    const startedAt = process.hrtime.bigint();
    if (made.logger) accessLine(made.logger, i, startedAt);
    await turn();
  }
  await made.drained();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

async function round1(name: string, out: string): Promise<number> {
  const fd = openSync(out, 'w');
  try {
    const made = VARIANTS[name]!(fd);
    await measure(made, Math.min(5000, LINES)); // warm-up
    const used = await measure(made, LINES);
    made.end?.();
    return used / LINES;
  } finally {
    closeSync(fd);
  }
}

async function main(): Promise<void> {
  const names = Object.keys(VARIANTS);
  const perLine: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const out = flags.out === '/dev/null' ? '/dev/null' : join(TMP, flags.out);
  mkdirSync(TMP, { recursive: true });
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) perLine[name]!.push(await round1(name, out));
  }
  if (out !== '/dev/null') rmSync(out, { force: true });
  const empty = median(perLine.nothing!) ?? 0;
  const cost = (name: string) => (median(perLine[name]!) ?? 0) - empty;
  console.log(`access-log line, CPU µs (process, user + system) a line, to ${out}; ${LINES} lines, ${ROUNDS} rounds, median`);
  console.log(`  loop without logging: ${round(empty, 2)} µs a turn (subtracted below)`);
  for (const name of names.slice(1)) {
    const rounds = perLine[name]!.map((v) => round(v - empty, 1)).join(' / ');
    console.log(
      `  ${name.padEnd(14)} ${String(round(cost(name), 2)).padStart(7)} µs   ÷ before ${round(cost(name) / cost('before'), 2)}   (${rounds})`,
    );
  }
}

await main();
