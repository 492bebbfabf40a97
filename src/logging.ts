import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { activeSpanIds, activeTracing } from './tracing/otel.js';

// Defence in depth: nothing in prequal-hooks logs these, and if a caller's object ever carries
// them, pino replaces them before the line is written.
const PII_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'phone_number'];
const REDACTED_PATHS = [
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

export type { Logger };

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
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination === undefined ? pino(config) : pino(config, destination);
}
