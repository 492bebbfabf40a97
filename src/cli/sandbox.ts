import { parseArgs } from 'node:util';
import { isApiKeyFormat } from '../api/index.js';
import { EVENT_KINDS, isServiceEventKind, type ServiceEventKind } from '../events/index.js';
import { createSandbox } from '../sandbox/index.js';
import { HELP_FLAG, integer, parsed, secretList, UsageError, type CommandIo } from './args.js';

export const SANDBOX_HELP = `Usage: prequal-hooks sandbox [options]

Runs the service of service-api.md locally: its REST API under /api/v1 with every documented
rule, campaigns whose candidates are called or invited and interview after a while, and real
webhooks to your receiver, retried as the service retries them. No credit is spent.

Options (environment fallback in brackets):
  --port <n>              port to listen on (default 8789; 0 takes a free port)
  --host <addr>           address to listen on (default 127.0.0.1)
  --api-key <key>         an accepted X-API-Key: a prefix ending in "live_", then 32 or more
                          characters; repeat it for several agencies (default: one generated)
  --inactive-api-key <k>  a key of a disabled agency: answered 401 AGENCY_INACTIVE (repeatable)
  --credits <n>           each agency's starting credit balance (default 100)
  --seed <s>              fixes identifiers and outcomes (default: random, printed)
  --interview-ms <n>      how long an interview takes (default 2000)
  --webhook-url <url>     where events are POSTed (default: nowhere)
  --webhook-secret <s>    signs each event, X-Service-Signature: sha256=<hex> [PREQUAL_HOOKS_SECRET]
  --events <list>         subscribed kinds, comma-separated (default all)
  --retry-base-ms <n>     first retry delay, doubled at each of the 3 retries (default 1000)
  --duplicates <rate>     share of events delivered twice, 0 to 1 (default 0)
  --reorder <rate>        share of deliveries held back behind later ones, 0 to 1 (default 0)
  --reserialize           write a duplicate's JSON with other key order and spacing
  -h, --help              show this help

Outside /api/v1: GET /sandbox/deliveries lists every delivery attempt; POST /sandbox/test-event
sends a test event like the dashboard's button (body {"event": "<kind>"}, default campaign.created).
SIGTERM or SIGINT stops it.`;

function share(name: string, value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new UsageError(`${name} must be a share from 0 to 1, such as 0.2, got "${value}"`);
  return n;
}

function amount(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`${name} must be a number from 0, got "${value}"`);
  return n;
}

function eventList(value: string | undefined): ServiceEventKind[] {
  if (value === undefined) return [...EVENT_KINDS];
  const kinds = value.split(',').map((k) => k.trim()).filter((k) => k !== '');
  for (const kind of kinds) if (!isServiceEventKind(kind)) throw new UsageError(`--events: unknown event kind "${kind}"; known: ${EVENT_KINDS.join(', ')}`);
  if (kinds.length === 0) throw new UsageError('--events must name at least one event kind');
  return kinds as ServiceEventKind[];
}

function webhookUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--webhook-url must be an absolute URL such as http://127.0.0.1:8787/webhooks, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--webhook-url must be http or https, got "${value}"`);
  return url.href;
}

export async function sandbox(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parsed(() =>
    parseArgs({
      args: argv,
      strict: true,
      options: {
        ...HELP_FLAG,
        port: { type: 'string' },
        host: { type: 'string' },
        'api-key': { type: 'string', multiple: true },
        'inactive-api-key': { type: 'string', multiple: true },
        credits: { type: 'string' },
        seed: { type: 'string' },
        'interview-ms': { type: 'string' },
        'webhook-url': { type: 'string' },
        'webhook-secret': { type: 'string' },
        events: { type: 'string' },
        'retry-base-ms': { type: 'string' },
        duplicates: { type: 'string' },
        reorder: { type: 'string' },
        reserialize: { type: 'boolean' },
      },
    }),
  );
  if (values.help) {
    io.stdout.write(`${SANDBOX_HELP}\n`);
    return 0;
  }
  const apiKeys = values['api-key'] ?? [];
  const inactiveApiKeys = values['inactive-api-key'] ?? [];
  for (const key of [...apiKeys, ...inactiveApiKeys]) {
    // The key itself is not repeated: it is a secret.
    if (!isApiKeyFormat(key)) throw new UsageError('--api-key must be a prefix ending in "live_" followed by 32 or more letters, digits, "_" or "-"');
  }
  const secret = secretList([values['webhook-secret'] ?? io.env.PREQUAL_HOOKS_SECRET])[0];
  const events = eventList(values.events);
  const url = webhookUrl(values['webhook-url']);
  const duplicates = share('--duplicates', values.duplicates);
  const reorder = share('--reorder', values.reorder);
  const interviewMs = integer('--interview-ms', values['interview-ms'], 2000, 0, 3_600_000);

  const running = await createSandbox({
    port: integer('--port', values.port, 8789, 0, 65535),
    host: values.host ?? '127.0.0.1',
    apiKeys,
    inactiveApiKeys,
    credits: amount('--credits', values.credits, 100),
    ...(values.seed !== undefined && { seed: values.seed }),
    interviewMs,
    ...(url !== undefined && { webhookUrl: url }),
    ...(secret !== undefined && { webhookSecret: secret }),
    events,
    retryBaseMs: integer('--retry-base-ms', values['retry-base-ms'], 1000, 0, 3_600_000),
    duplicates,
    reorder,
    reserialize: values.reserialize === true,
    log: (line) => io.stderr.write(line),
  });

  const stopped = new Promise<number>((done) => {
    const stop = () => void running.close().then(() => done(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });

  const lines = [`prequal-hooks sandbox: the service's API on ${running.apiUrl} (seed ${running.seed}, interviews ${interviewMs} ms)`];
  if (running.generatedApiKey !== undefined) {
    lines.push(`API key (generated; send it as X-API-Key): ${running.generatedApiKey}`);
  } else {
    lines.push(`${apiKeys.length} API key${apiKeys.length === 1 ? '' : 's'} accepted (one agency each)`);
  }
  if (url === undefined) {
    lines.push('Webhooks: none sent (no --webhook-url)');
  } else {
    const faults = [duplicates > 0 && `duplicates ${duplicates}`, reorder > 0 && `reorder ${reorder}`, values.reserialize && 'reserialized duplicates'].filter(Boolean);
    lines.push(
      `Webhooks: POST ${url}, ${secret === undefined ? 'unsigned' : 'signed'}, events ${events.length === EVENT_KINDS.length ? 'all' : events.join(',')}` +
        (faults.length > 0 ? `, faults: ${faults.join(', ')}` : ''),
    );
  }
  lines.push(`Deliveries: GET ${running.url}/sandbox/deliveries; test event: POST ${running.url}/sandbox/test-event`);
  // What a user copies (the address, the key) is output: on stdout, so that `> file` or a pipe
  // keeps it; delivery diagnostics stay on stderr.
  io.stdout.write(`${lines.join('\n')}\n`);
  return await stopped;
}
