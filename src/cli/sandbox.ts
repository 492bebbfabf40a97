import { isApiKeyFormat } from '../api/index.js';
import { EVENT_KINDS, isServiceEventKind, type ServiceEventKind } from '../events/index.js';
import { createSandbox } from '../sandbox/index.js';
import { integer, UsageError, webhookUrl } from './args.js';
import { resolveFileVariants, withFileVariants } from './file-variants.js';
import { flag, flagsOnly, list, optional, optionsHelp, value, type OptionValues } from './options.js';
import { defineCommand } from './command.js';
import { count } from '../words.js';

export const SANDBOX_OPTIONS = withFileVariants(
  flagsOnly({
    port: value({
      placeholder: '<n>',
      help: 'port to listen on (0 takes a free port)',
      default: 8789,
      defaultHelp: '8789',
      parse: (text: string, name: string) => integer(name, text, 8789, 0, 65535),
    }),
    host: value({
      placeholder: '<addr>',
      help: 'address to listen on',
      default: '127.0.0.1',
      defaultHelp: '127.0.0.1',
      parse: (text: string) => text,
    }),
    'api-key': list({
      placeholder: '<key>',
      help: 'an accepted X-API-Key: a prefix ending in "live_", then 32 or more characters; repeat it for several agencies (default: one generated)',
      secret: true,
    }),
    'inactive-api-key': list({
      placeholder: '<k>',
      help: 'a key of a disabled agency: answered 401 AGENCY_INACTIVE (repeatable)',
      secret: true,
    }),
    credits: value({
      placeholder: '<n>',
      help: "each agency's starting credit balance",
      default: 100,
      defaultHelp: '100',
      parse: (text: string, name: string) => amount(name, text),
    }),
    seed: optional({ placeholder: '<s>', help: 'fixes identifiers and outcomes (default: random, printed)' }),
    'interview-ms': value({
      placeholder: '<n>',
      help: 'how long an interview takes',
      default: 2000,
      defaultHelp: '2000',
      parse: (text: string, name: string) => integer(name, text, 2000, 0, 3_600_000),
    }),
    'webhook-url': value<string | undefined>({
      placeholder: '<url>',
      help: 'where events are POSTed (default: nowhere)',
      default: undefined,
      parse: (text: string, name: string) => webhookUrl(name, text).href,
    }),
    'webhook-secret': {
      ...list({
        placeholder: '<s>',
        help: 'signs each event, X-Service-Signature: sha256=<hex> (the first of a comma-separated list); --webhook-secret-file keeps it out of the process list',
        secret: true,
        fileVariant: true,
      }),
      env: ['PREQUAL_HOOKS_SECRET'],
    },
    events: value({
      placeholder: '<list>',
      help: 'subscribed kinds, comma-separated (default all)',
      default: [...EVENT_KINDS],
      parse: (text: string, name: string) => eventList(name, text),
    }),
    'retry-base-ms': value({
      placeholder: '<n>',
      help: 'first retry delay, doubled at each of the 3 retries',
      default: 1000,
      defaultHelp: '1000',
      parse: (text: string, name: string) => integer(name, text, 1000, 0, 3_600_000),
    }),
    duplicates: value({
      placeholder: '<rate>',
      help: 'share of events delivered twice, 0 to 1',
      default: 0,
      defaultHelp: '0',
      parse: (text: string, name: string) => share(name, text),
    }),
    reorder: value({
      placeholder: '<rate>',
      help: 'share of deliveries held back behind later ones, 0 to 1',
      default: 0,
      defaultHelp: '0',
      parse: (text: string, name: string) => share(name, text),
    }),
    reserialize: flag({ help: "write a duplicate's JSON with other key order and spacing" }),
  }),
);

export const SANDBOX_HELP = `Usage: prequal-hooks sandbox [options]

Runs the service, as its API documentation describes it, locally: its REST API under /api/v1
with every documented rule, campaigns whose candidates are called or invited and interview after
a while, and real webhooks to your receiver, retried as the service retries them. No credit is spent.

${optionsHelp(SANDBOX_OPTIONS)}

Outside /api/v1: GET /sandbox/deliveries lists every delivery attempt; POST /sandbox/test-event
sends a test event like the dashboard's button (body {"event": "<kind>"}, default campaign.created).
SIGTERM or SIGINT stops it.`;

function share(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new UsageError(`${name} must be a share from 0 to 1, such as 0.2, got "${value}"`);
  return n;
}

function amount(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`${name} must be a number from 0, got "${value}"`);
  return n;
}

function eventList(name: string, value: string): ServiceEventKind[] {
  const kinds = value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  for (const kind of kinds)
    if (!isServiceEventKind(kind)) throw new UsageError(`${name}: unknown event kind "${kind}"; known: ${EVENT_KINDS.join(', ')}`);
  if (kinds.length === 0) throw new UsageError(`${name} must name at least one event kind`);
  return kinds as ServiceEventKind[];
}

export const sandbox = defineCommand({
  options: SANDBOX_OPTIONS,
  help: SANDBOX_HELP,
  async run(parsed, io) {
    const { values } = resolveFileVariants(SANDBOX_OPTIONS, parsed);
    const apiKeys = values['api-key'];
    for (const key of [...apiKeys, ...values['inactive-api-key']]) {
      // The key itself is not repeated: it is a secret.
      if (!isApiKeyFormat(key))
        throw new UsageError('--api-key must be a prefix ending in "live_" followed by 32 or more letters, digits, "_" or "-"');
    }
    const secret = values['webhook-secret'][0];
    const running = await createSandbox({
      port: values.port,
      host: values.host,
      apiKeys,
      inactiveApiKeys: values['inactive-api-key'],
      credits: values.credits,
      ...(values.seed !== undefined && { seed: values.seed }),
      interviewMs: values['interview-ms'],
      ...(values['webhook-url'] !== undefined && { webhookUrl: values['webhook-url'] }),
      ...(secret !== undefined && { webhookSecret: secret }),
      events: values.events,
      retryBaseMs: values['retry-base-ms'],
      duplicates: values.duplicates,
      reorder: values.reorder,
      reserialize: values.reserialize,
      log: (line) => io.stderr.write(line),
    });
    const stopped = new Promise<number>((done) => {
      const stop = () => void running.close().then(() => done(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });

    // What a user copies (the address, the key) is output: on stdout, so that `> file` or a pipe
    // keeps it; delivery diagnostics stay on stderr.
    io.stdout.write(`${startLines(running, values).join('\n')}\n`);
    return await stopped;
  },
});

/** What the person at the terminal needs: the API's address, the key, where webhooks go. */
function startLines(running: Awaited<ReturnType<typeof createSandbox>>, values: OptionValues<typeof SANDBOX_OPTIONS>): string[] {
  const lines = [
    `prequal-hooks sandbox: the service's API on ${running.apiUrl} (seed ${running.seed}, interviews ${values['interview-ms']} ms)`,
  ];
  if (running.generatedApiKey !== undefined) {
    lines.push(`API key (generated; send it as X-API-Key): ${running.generatedApiKey}`);
  } else {
    lines.push(`${count(values['api-key'].length, 'API key')} accepted (one agency each)`);
  }
  const url = values['webhook-url'];
  const secret = values['webhook-secret'][0];
  const { duplicates, reorder, events } = values;
  if (url === undefined) {
    lines.push('Webhooks: none sent (no --webhook-url)');
  } else {
    const faults = [
      duplicates > 0 && `duplicates ${duplicates}`,
      reorder > 0 && `reorder ${reorder}`,
      values.reserialize && 'reserialized duplicates',
    ].filter(Boolean);
    lines.push(
      `Webhooks: POST ${url}, ${secret === undefined ? 'unsigned' : 'signed'}, events ${events.length === EVENT_KINDS.length ? 'all' : events.join(',')}` +
        (faults.length > 0 ? `, faults: ${faults.join(', ')}` : ''),
    );
  }
  lines.push(`Deliveries: GET ${running.url}/sandbox/deliveries; test event: POST ${running.url}/sandbox/test-event`);
  return lines;
}
