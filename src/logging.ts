import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

// Defence in depth: nothing in prequal-hooks logs these, and if a caller's object ever carries
// them, pino replaces them before the line is written.
const PII_FIELDS = ['first_name', 'last_name', 'email', 'phone', 'phone_number'];
export const REDACTED_PATHS = [
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

/** A pino logger with prequal-hooks' redaction; JSON lines to `destination` (stdout by default). */
export function createLogger(options: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const config: LoggerOptions = {
    name: 'prequal-hooks',
    level: 'info',
    ...options,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination === undefined ? pino(config) : pino(config, destination);
}
