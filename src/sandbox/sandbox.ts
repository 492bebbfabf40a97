// createSandbox: the service running locally, as docs/sandbox.md describes it, wired from its parts.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { isApiKeyFormat, LIMITS, type SubscriptionType } from '../api/index.js';
import { EVENT_KINDS, eventIdentity, isServiceEventKind, type ServiceEventKind } from '../events/index.js';
import { sampleEvent } from '../testing/samples.js';
import { createRateLimiter } from './auth.js';
import { createEventClock, systemClock, type Clock } from './clock.js';
import type { SandboxContext } from './context.js';
import { createCreditAccount } from './credits.js';
import { createDelivery, type DeliveryAttempt } from './delivery.js';
import { errorReply, ok } from './errors.js';
import { createEmitter } from './events.js';
import { createLife } from './life.js';
import { createRandom } from './random.js';
import { createSandboxServer } from './server.js';
import type { Agency } from './state.js';

/** Options of `createSandbox`; every one has a documented default. */
export interface SandboxOptions {
  /** Port to listen on (default 0: any free port). */
  port?: number;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Accepted API keys, one agency each (default: one generated key, see `generatedApiKey`). */
  apiKeys?: string[];
  /** Keys of disabled agencies: they answer 401 AGENCY_INACTIVE (default none). */
  inactiveApiKeys?: string[];
  /** Each agency's starting (and monthly) credit balance (default 100). */
  credits?: number;
  /** Default `Service Resonance`; `Pay as you go` has no monthly reset. */
  subscriptionType?: SubscriptionType;
  /** `credits.low` is sent when the balance falls below this (default 10). */
  lowCreditThreshold?: number;
  /** Fixes identifiers and outcomes (default: a random seed, see `seed`). */
  seed?: string | number;
  /** How long an interview takes (default 2000 ms). */
  interviewMs?: number;
  /** Where webhooks are POSTed (default: nowhere). */
  webhookUrl?: string;
  /** Signs webhooks (`X-Service-Signature`) when set. */
  webhookSecret?: string;
  /** Subscribed event kinds (default all ten). */
  events?: readonly ServiceEventKind[];
  /** First retry delay, doubled at each of the 3 retries (default 1000 ms). */
  retryBaseMs?: number;
  /** A receiver has this long to answer 2xx (default 5000 ms). */
  deliveryTimeoutMs?: number;
  /** Share of events delivered twice (default 0). */
  duplicates?: number;
  /** Share of deliveries held back behind later ones (default 0). */
  reorder?: number;
  /** Duplicates are written with other key order and spacing (default false). */
  reserialize?: boolean;
  /** Where the time comes from (tests cross rate-limit windows with their own). */
  clock?: Clock;
  /** Where operational lines go (failed deliveries, unexpected errors); default stderr. */
  log?: (line: string) => void;
}

/** A running sandbox (`createSandbox`): the service's API and its webhooks, on this machine. */
export interface Sandbox {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  /** e.g. http://127.0.0.1:40123/api/v1 */
  apiUrl: string;
  /** The accepted keys, the generated one included. */
  apiKeys: string[];
  /** The key generated when no `apiKeys` were given. */
  generatedApiKey: string | undefined;
  /** The seed in use: pass it again to get the same outcomes. */
  seed: string;
  /** Every delivery attempt so far. */
  deliveries(): readonly DeliveryAttempt[];
  /** No interview scheduled and no delivery pending. */
  idle(): boolean;
  /** Resolves once idle (rejects after `timeoutMs`, default 60 s). */
  settle(timeoutMs?: number): Promise<void>;
  /** Stops sending and listening; pending deliveries are dropped. */
  close(): Promise<void>;
}

/** A key of the documented format: a prefix ending in `live_`, then 40 random characters. */
function generateApiKey(): string {
  return `sbx_live_${randomBytes(30).toString('base64url')}`;
}

function rate(name: string, value: number | undefined): number {
  const r = value ?? 0;
  if (!(r >= 0 && r <= 1)) throw new RangeError(`${name} must be a share from 0 to 1, got ${value}`);
  return r;
}

/** Starts a sandbox: the service's REST API on `url`, sending signed webhooks to `webhookUrl` as its state changes. */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? ((line: string) => process.stderr.write(line));
  const seed = String(options.seed ?? randomBytes(6).toString('hex'));
  const root = createRandom(seed);
  const generatedApiKey = options.apiKeys?.length ? undefined : generateApiKey();
  const apiKeys = options.apiKeys?.length ? [...options.apiKeys] : [generatedApiKey!];
  const agencies = agenciesOf(options, apiKeys, clock);
  const events = options.events ?? EVENT_KINDS;
  for (const kind of events)
    if (!isServiceEventKind(kind)) throw new RangeError(`unknown event kind ${JSON.stringify(kind)}; known: ${EVENT_KINDS.join(', ')}`);
  const interviewMs = options.interviewMs ?? 2000;
  const delivery = createDelivery({
    url: options.webhookUrl,
    secret: options.webhookSecret,
    timeoutMs: options.deliveryTimeoutMs ?? LIMITS.webhookTimeoutMs,
    retryBaseMs: options.retryBaseMs ?? 1000,
    duplicates: rate('duplicates', options.duplicates),
    reorder: rate('reorder', options.reorder),
    reorderHoldMs: Math.max(interviewMs, 200),
    reserialize: options.reserialize ?? false,
    random: root.derive('faults'),
    clock,
    log,
  });
  const eventClock = createEventClock(clock);
  const emitter = createEmitter({ eventClock, delivery, subscribed: new Set(events) });
  const life = createLife({ interviewMs, emitter, clock });
  const context: SandboxContext = { clock, emitter, life, ids: root.derive('ids'), outcomes: root.derive('outcomes') };
  const idle = () => life.pending() === 0 && delivery.pending() === 0;
  const server = createSandboxServer({
    agencies,
    context,
    limiter: createRateLimiter(clock),
    log,
    sandboxRoutes: sandboxRoutes(options, { emitter, eventClock, life, delivery, idle }),
  });
  const url = await listen(server, options);
  return {
    url,
    apiUrl: `${url}/api/v1`,
    apiKeys,
    generatedApiKey,
    seed,
    deliveries: () => delivery.attempts(),
    idle,
    async settle(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!idle()) {
        if (Date.now() > deadline) throw new Error(`the sandbox was not idle within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close() {
      life.close();
      delivery.close();
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** One agency a key: the active keys first, then the inactive ones (refused with the service's 401). */
function agenciesOf(options: SandboxOptions, apiKeys: readonly string[], clock: Clock): Map<string, Agency> {
  const inactive = options.inactiveApiKeys ?? [];
  for (const key of [...apiKeys, ...inactive]) {
    if (!isApiKeyFormat(key))
      throw new RangeError('an API key must be a prefix ending in "live_" followed by 32 or more letters, digits, "_" or "-"');
  }
  const agencies = new Map<string, Agency>();
  [...apiKeys, ...inactive].forEach((apiKey, i) => {
    agencies.set(apiKey, {
      id: `agency_${i + 1}`,
      name: `Sandbox Agency ${i + 1}`,
      apiKey,
      active: i < apiKeys.length,
      credits: createCreditAccount(
        options.credits ?? 100,
        options.subscriptionType ?? 'Service Resonance',
        options.lowCreditThreshold ?? LIMITS.lowCreditThreshold,
        clock.now(),
      ),
      campaigns: new Map(),
    });
  });
  return agencies;
}

type SandboxServices = {
  emitter: ReturnType<typeof createEmitter>;
  eventClock: ReturnType<typeof createEventClock>;
  life: ReturnType<typeof createLife>;
  delivery: ReturnType<typeof createDelivery>;
  idle: () => boolean;
};

/** The routes outside /api/v1 (no key): the deliveries so far, and the dashboard's test button. */
function sandboxRoutes(options: SandboxOptions, services: SandboxServices): Parameters<typeof createSandboxServer>[0]['sandboxRoutes'] {
  const { emitter, eventClock, life, delivery, idle } = services;
  return {
    'GET /sandbox/deliveries': () =>
      ok({ idle: idle(), pending: { interviews: life.pending(), deliveries: delivery.pending() }, attempts: delivery.attempts() }),
    // The dashboard's test button: a sample of the kind asked (default campaign.created), sent now.
    'POST /sandbox/test-event': (body) => {
      const kind = (body as { event?: unknown } | undefined)?.event ?? 'campaign.created';
      if (typeof kind !== 'string' || !isServiceEventKind(kind))
        return errorReply('VALIDATION_ERROR', { event: `must be one of ${EVENT_KINDS.join(', ')}` });
      const event = sampleEvent(kind, { timestamp: eventClock.next() });
      emitter.sendTest(event);
      return ok({ event: kind, timestamp: event.timestamp, identity: eventIdentity(event), webhook_url: options.webhookUrl ?? null }, 202);
    },
  };
}

/** Listens where the options say (a free loopback port by default); resolves with its base URL. */
async function listen(server: ReturnType<typeof createSandboxServer>, options: SandboxOptions): Promise<string> {
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
