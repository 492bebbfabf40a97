// Webhook delivery as the service does it (docs/sandbox.md, "Delivery"), plus the faults a real
// sender inflicts (duplicates, reordering, other serializations), each off by default.
import PQueue from 'p-queue';
import { DEFAULT_EVENT_HEADER, DEFAULT_SIGNATURE_HEADER } from '../receive/intake.js';
import { eventIdentity, type Envelope } from '../events/index.js';
import { LIMITS } from '../api/index.js';
import { sign } from '../signature.js';
import type { Clock } from './clock.js';
import type { Random } from './random.js';

export interface DeliveryOptions {
  /** Where events are POSTed; without one nothing is sent. */
  url?: string | undefined;
  /** Signs each body (`X-Service-Signature: sha256=<hex>`) when set. */
  secret?: string | undefined;
  /** A 2xx within this is success (default 5000, the document's 5 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Delay before the first retry, doubled at each (default 1000: 1 s, 2 s, 4 s). */
  retryBaseMs?: number;
  /** Share of events delivered twice, 0 to 1 (default 0). */
  duplicates?: number;
  /** Share of deliveries held back behind later ones, 0 to 1 (default 0). */
  reorder?: number;
  /** Longest a held delivery waits for later ones (default 2000 ms). */
  reorderHoldMs?: number;
  /** A duplicate's JSON is written with other key order and spacing (default false). */
  reserialize?: boolean;
  random: Random;
  clock: Clock;
  /** One line per delivery given up (no PII: kind and identity only). */
  log?: (line: string) => void;
}

/** One HTTP attempt, as `GET /sandbox/deliveries` lists it. */
export interface DeliveryAttempt {
  /** Which delivery (a duplicate is a delivery of its own). */
  delivery_id: number;
  /** The event's kind. */
  event: string;
  /** The event's identity (docs/projection.md section 1): the same for a duplicate, whatever its bytes. */
  identity: string;
  /** `original`, or `duplicate` for the second copy of an event. */
  copy: 'original' | 'duplicate';
  /** 1 for the first try, up to 1 + retries. */
  attempt: number;
  /** The receiver's HTTP status, or null when there was none. */
  status: number | null;
  /** Why the attempt failed without a status (`timeout after 5000 ms`, `ECONNREFUSED`), else null. */
  error: string | null;
  /** `delivered` (2xx), `retrying` (another attempt follows) or `failed` (given up). */
  outcome: 'delivered' | 'retrying' | 'failed';
  /** When the attempt started, ISO 8601. */
  at: string;
  /** How long the attempt took, in ms. */
  duration_ms: number;
}

interface Pending {
  id: number;
  kind: string;
  identity: string;
  body: string;
  copy: 'original' | 'duplicate';
  attempt: number;
}

/** Other key order (reversed, at every depth) and other spacing: the same JSON value, other bytes. */
function reserialize(value: unknown): string {
  const reorder = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(reorder);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .reverse()
          .map((k) => [k, reorder((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return `${JSON.stringify(reorder(value), null, 2)}\n`;
}

/** The sender's state: the attempts so far, what waits (queued, held back, before a retry). */
interface Sender {
  readonly options: DeliveryOptions;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly retryBaseMs: number;
  readonly holdMs: number;
  readonly attempts: DeliveryAttempt[];
  /** Attempts run a few at a time, in the order they were queued. */
  readonly queue: PQueue;
  readonly timers: Set<NodeJS.Timeout>;
  readonly closing: AbortController;
  nextId: number;
  /** Held back or waiting to retry. */
  waiting: number;
  readonly held: Array<{ pending: Pending; behind: number; release: () => void }>;
  closed: boolean;
}

export function createDelivery(options: DeliveryOptions) {
  const sender: Sender = {
    options,
    timeoutMs: options.timeoutMs ?? LIMITS.webhookTimeoutMs,
    retries: options.retries ?? LIMITS.webhookRetries,
    retryBaseMs: options.retryBaseMs ?? 1000,
    holdMs: options.reorderHoldMs ?? 2000,
    attempts: [],
    queue: new PQueue({ concurrency: 8 }),
    timers: new Set(),
    closing: new AbortController(),
    nextId: 1,
    waiting: 0,
    held: [],
    closed: false,
  };
  return {
    /** Delivers one event: signed, perhaps twice, perhaps held back, retried on failure. */
    send: (envelope: Envelope): void => send(sender, envelope),
    /** Every attempt so far, in the order they ended. */
    attempts: (): readonly DeliveryAttempt[] => sender.attempts,
    /** Deliveries not yet delivered or given up (queued, in flight, held back, waiting to retry). */
    pending: (): number => sender.queue.size + sender.queue.pending + sender.waiting,
    /** Stops: drops what is pending and aborts what is in flight. */
    close(): void {
      sender.closed = true;
      sender.closing.abort();
      for (const timer of sender.timers) clearTimeout(timer);
      sender.timers.clear();
      sender.held.length = 0;
      sender.queue.clear();
    },
  };
}

function send(sender: Sender, envelope: Envelope): void {
  const { options } = sender;
  if (sender.closed || options.url === undefined) return;
  const identity = eventIdentity(envelope);
  const body = JSON.stringify(envelope);
  const copies: Pending[] = [{ id: sender.nextId++, kind: envelope.event, identity, body, copy: 'original', attempt: 1 }];
  if (options.random.chance(options.duplicates ?? 0)) {
    copies.push({
      id: sender.nextId++,
      kind: envelope.event,
      identity,
      body: options.reserialize ? reserialize(envelope) : body,
      copy: 'duplicate',
      attempt: 1,
    });
  }
  for (const copy of copies) {
    if (options.random.chance(options.reorder ?? 0)) hold(sender, copy);
    else enqueue(sender, copy);
  }
}

function later(sender: Sender, ms: number, run: () => void): NodeJS.Timeout {
  const timer = setTimeout(() => {
    sender.timers.delete(timer);
    run();
  }, ms);
  sender.timers.add(timer);
  return timer;
}

function enqueue(sender: Sender, pending: Pending): void {
  if (sender.closed) return;
  // Each first attempt of a later delivery moves the held ones one place closer to release.
  if (pending.attempt === 1) {
    for (const h of [...sender.held]) if (--h.behind <= 0) h.release();
  }
  void sender.queue.add(() => attempt(sender, pending));
}

/** Holds a delivery back behind 1 to 3 later ones, or `holdMs` at most. */
function hold(sender: Sender, pending: Pending): void {
  sender.waiting++;
  const entry = {
    pending,
    behind: 1 + sender.options.random.int(3),
    release: () => {
      const i = sender.held.indexOf(entry);
      if (i < 0) return;
      sender.held.splice(i, 1);
      clearTimeout(timer);
      sender.timers.delete(timer);
      sender.waiting--;
      enqueue(sender, pending);
    },
  };
  sender.held.push(entry);
  const timer = later(sender, sender.holdMs, entry.release);
}

/** One POST: the receiver's status, or why there was none. */
async function post(sender: Sender, pending: Pending): Promise<{ status: number | null; error: string | null }> {
  const { options } = sender;
  try {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      [DEFAULT_EVENT_HEADER.toLowerCase()]: pending.kind,
      'user-agent': 'prequal-hooks-sandbox',
    };
    if (options.secret !== undefined) headers[DEFAULT_SIGNATURE_HEADER.toLowerCase()] = sign(options.secret, pending.body);
    const signal = AbortSignal.any([AbortSignal.timeout(sender.timeoutMs), sender.closing.signal]);
    const response = await fetch(options.url!, { method: 'POST', headers, body: pending.body, redirect: 'manual', signal });
    // The answer counts once it is whole, within the same time limit.
    await response.arrayBuffer();
    return { status: response.status, error: null };
  } catch (caught) {
    const e = caught as Error & { cause?: { code?: string; message?: string } };
    return {
      status: null,
      error: e.name === 'TimeoutError' ? `timeout after ${sender.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message),
    };
  }
}

/** An attempt, recorded; a failure retried after a doubling delay, or given up after the last. */
async function attempt(sender: Sender, pending: Pending): Promise<void> {
  const { options } = sender;
  if (sender.closed || options.url === undefined) return;
  const started = options.clock.now();
  const t0 = performance.now();
  const { status, error } = await post(sender, pending);
  if (sender.closed) return;
  const delivered = status !== null && status >= 200 && status < 300;
  const last = pending.attempt > sender.retries;
  sender.attempts.push({
    delivery_id: pending.id,
    event: pending.kind,
    identity: pending.identity,
    copy: pending.copy,
    attempt: pending.attempt,
    status,
    error,
    outcome: delivered ? 'delivered' : last ? 'failed' : 'retrying',
    at: new Date(started).toISOString(),
    duration_ms: Math.round((performance.now() - t0) * 10) / 10,
  });
  if (delivered) return;
  if (last) {
    options.log?.(
      `prequal-hooks sandbox: gave up delivering ${pending.kind} (identity ${pending.identity.slice(0, 12)}, ${pending.copy}) after ${pending.attempt} attempts: ${status ?? error}\n`,
    );
    return;
  }
  sender.waiting++;
  later(sender, sender.retryBaseMs * 2 ** (pending.attempt - 1), () => {
    sender.waiting--;
    enqueue(sender, { ...pending, attempt: pending.attempt + 1 });
  });
}

export type Delivery = ReturnType<typeof createDelivery>;
