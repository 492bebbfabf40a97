import type { Logger } from 'pino';
import { ConfigurationError } from '../errors.js';
import { readEnvelope } from '../events/index.js';
import { secretFingerprint, verify, type Secret } from '../signature.js';
import { errorAnswer, type Answer } from './answer.js';
import { FREE_PIECES, MIN_PIECE_BYTES } from './body-buffer.js';
import { deliveryOf, type StoreDelivery } from './delivery.js';
import { DEFAULT_ACCOUNT, type AccountRoutes, type RoutedAccount } from './account.js';
import { headerValue, type IncomingHeaders } from './headers.js';
import { createBodyBudget, DEFAULT_MAX_BUFFERED_BYTES, type BodyBudget, type CutReason } from './budget.js';
import { createAdmission, type Admission } from './admission.js';
import { spanIds, type Span, type Tracing } from '../tracing/otel.js';
import { receiveTraced, storeTraced } from './spans.js';

/** The largest body an intake accepts by default, in bytes: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The header carrying the signature by default (`sha256=<hex>`); the service's name replaces "Service". */
export const DEFAULT_SIGNATURE_HEADER = 'X-Service-Signature';
/** The header carrying the event name by default; the service's name replaces "Service". */
export const DEFAULT_EVENT_HEADER = 'X-Service-Event';
/** Seconds a sender is asked to wait after a 503: the service retries only 3 times. */
const RETRY_AFTER_SECONDS = '5';

/** How `createIntake` verifies and stores requests. */
export interface IntakeOptions {
  /** Shared secrets of the default account (`/webhooks`); any one of them may sign (rotation). */
  secrets?: readonly Secret[];
  /** Accept unsigned requests to the default account. Only when no secret is configured, and only when set explicitly. */
  allowUnsigned?: boolean;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Header carrying `sha256=<hex>`; the service's name replaces "Service". */
  signatureHeader?: string;
  /** Header carrying the event name (informational: the body's `event` wins). */
  eventHeader?: string;
  /** Writes a delivery durably; the intake answers 2xx only after it resolves ok. */
  store: StoreDelivery;
  /** Where store failures and unexpected errors are logged. Default: not logged. */
  logger?: Pick<Logger, 'warn' | 'error'>;
  /** The clock of `receivedAt`, in Unix ms. Default `Date.now`. */
  now?: () => number;
}

/** What a receiver adds to an intake: the accounts it routes to, the budget it shares, its tracing. */
interface IntakeWiring extends IntakeOptions {
  /**
   * The other accounts, by the key of their webhook path (`/webhooks/<route key>`); none: a request
   * with a route key is 404; 'unavailable' while they cannot be read (503: the sender retries).
   * Replaced as a whole with `setAccounts`.
   */
  accounts?: AccountRoutes | 'unavailable';
  /**
   * The bytes of bodies the adapters may hold at once before verifying them, shared by all their
   * requests (and by other intakes given the same budget); past it, new bodies get 503 BUSY
   * unread. Default: a budget of its own, 64 MiB. No smaller than `maxBodyBytes`.
   */
  budget?: BodyBudget;
  /**
   * Who is read and verified first when requests contend for the event loop, by client address
   * and its failures (admission.ts), shared like the budget. Default: one of its own.
   */
  admission?: Admission;
  /** OpenTelemetry spans for each request and its inbox commit; none: no span, no cost. */
  tracing?: Tracing | undefined;
}

/** What the intake did with a request, beside the answer: for logs and for the dispatcher. */
export interface IntakeResult {
  /** The HTTP answer to send back. */
  answer: Answer;
  /**
   * `busy`: answered 503 unread, the bodies held already filling the budget; `failed`: an
   * unexpected exception, answered 500 (nothing acknowledged).
   */
  outcome: 'stored' | 'duplicate' | 'refused' | 'busy' | 'kept_invalid' | 'unavailable' | 'failed';
  /** The body's `event`, when the body is an envelope. */
  kind?: string;
  /** The event's identity (docs/projection.md section 1), when the body is an event. */
  identity?: string;
  /** The inbox row it was stored as; absent for a duplicate or when nothing was stored. */
  inboxId?: number;
  /** The fingerprint of the secret that verified the signature (none: unsigned intake). */
  secretFingerprint?: string;
  /** The request's OpenTelemetry span, when tracing is on: for the access log line. */
  trace?: { trace_id: string; span_id: string };
  /** The account the request was routed to; absent when its path named no account (404). */
  account?: string;
}

/** One HTTP request as the intake reads it, whatever the framework. */
export interface IncomingRequest {
  /** The exact bytes of the body, never a parsed or re-serialised form. */
  rawBody: Uint8Array;
  /** Its headers: a record keyed by lowercase name (node:http), or anything with `get` (fetch `Headers`). */
  headers: IncomingHeaders;
  /** The key of its webhook path (`/webhooks/<route key>`); absent: the default account's `/webhooks`. */
  routeKey?: string | undefined;
}

/** Where a request goes: an account's keys, or an answer given before its body is read (unknown path, disabled account). */
export type Routing = { ok: true; account: string; keys: Keys } | { ok: false; result: IntakeResult };

/** The secrets in use and their fingerprints, replaced as a whole (never edited) by a rotation. */
interface Keys {
  readonly secrets: readonly Secret[];
  readonly fingerprints: readonly string[];
}

/** The intake's options, resolved once; only `keys` changes, swapped in one assignment. */
interface IntakeConfig {
  keys: Keys;
  accounts: AccountRoutes | 'unavailable' | undefined;
  allowUnsigned: boolean;
  maxBodyBytes: number;
  signatureHeader: string;
  eventHeader: string;
  now: () => number;
  store: StoreDelivery;
  logger: IntakeOptions['logger'];
  tracing: Tracing | undefined;
}

/** The framework-free core of a receiver, as `createIntake` returns it. */
export interface RequestIntake {
  /** Verifies a request, stores it as a delivery and says what to answer; never rejects (an unexpected error is a 500). */
  receive(request: IncomingRequest): Promise<IntakeResult>;
  /**
   * Replaces the secrets for the requests that start from now on (a rotation without restart).
   * Throws, changing nothing, when the new set is empty on a signed intake.
   */
  setSecrets(secrets: readonly Secret[]): void;
  /** The largest body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** The header read for the signature. */
  readonly signatureHeader: string;
  /** The header read for the event name. */
  readonly eventHeader: string;
}

/**
 * The framework-free core: raw bytes and headers in, a stored delivery and an answer out.
 * Express, node:http and fetch adapters all call `receive`.
 */
export function createIntake(options: IntakeWiring) {
  const allowUnsigned = options.allowUnsigned === true;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const budget = options.budget ?? createBodyBudget(DEFAULT_MAX_BUFFERED_BYTES);
  if (!(Number.isSafeInteger(budget.limitBytes) && budget.limitBytes >= maxBodyBytes)) {
    throw new ConfigurationError(
      `The budget of buffered bodies (${budget.limitBytes} bytes) must be a whole number of bytes no smaller than the body limit (${maxBodyBytes}): a body at the limit could never be read.`,
    );
  }
  const config: IntakeConfig = {
    keys: keysOf(options.secrets ?? [], allowUnsigned),
    accounts: options.accounts,
    allowUnsigned,
    maxBodyBytes,
    signatureHeader: options.signatureHeader ?? DEFAULT_SIGNATURE_HEADER,
    eventHeader: options.eventHeader ?? DEFAULT_EVENT_HEADER,
    now: options.now ?? Date.now,
    store: options.store,
    logger: options.logger,
    tracing: options.tracing,
  };
  const unexpected = (error: unknown, stage: string) => unexpectedError(config, error, stage);
  async function receive(request: IncomingRequest): Promise<IntakeResult> {
    if (config.tracing !== undefined) return await receiveTraced(config.tracing, request, (span) => receiveWithin(request, span));
    return await receiveWithin(request, undefined);
  }
  async function receiveWithin(request: IncomingRequest, span: Span | undefined): Promise<IntakeResult> {
    try {
      const routing = routeOf(config, request.routeKey);
      if (!routing.ok) return routing.result;
      span?.setAttribute('prequal_hooks.account', routing.account);
      return { ...(await receiveOrThrow(config, routing, request, span)), account: routing.account };
    } catch (error) {
      return unexpected(error, 'intake');
    }
  }
  /**
   * Replaces the secrets for the requests that start from now on (a rotation without restart);
   * requests being verified finish with the set they started with. Throws, changing nothing,
   * when the new set is empty on a signed intake.
   */
  function setSecrets(secrets: readonly Secret[]): void {
    config.keys = keysOf(secrets, config.allowUnsigned);
  }
  /** Replaces the accounts routed by webhook path, for the requests that start from now on. */
  function setAccounts(accounts: AccountRoutes | 'unavailable' | undefined): void {
    config.accounts = accounts;
  }
  return {
    receive,
    /** Where a request with this route key goes, or the answer it gets unread (adapters ask before reading a body). */
    route: (routeKey: string | undefined) => routeOf(config, routeKey),
    setAccounts,
    unexpected,
    setSecrets,
    maxBodyBytes: config.maxBodyBytes,
    budget,
    admission: options.admission ?? createAdmission(),
    signatureHeader: config.signatureHeader,
    eventHeader: config.eventHeader,
  };
}

function keysOf(given: readonly Secret[], allowUnsigned: boolean): Keys {
  const secrets = given.filter((s) => s.length > 0);
  if (secrets.length === 0 && !allowUnsigned) {
    throw new ConfigurationError(
      'No webhook secret is configured. Pass the shared secret from the agency dashboard ' +
        '(API section, Webhooks tab) as `secrets`, or set `allowUnsigned: true` to accept ' +
        'unsigned events knowingly (anyone who can reach the endpoint can then write events).',
    );
  }
  return Object.freeze({ secrets: Object.freeze(secrets), fingerprints: Object.freeze(secrets.map(secretFingerprint)) });
}

/**
 * Last resort for an exception no stage expected: a 500 in the service's envelope (the sender
 * retries) and one log line with the error's type and where it was thrown. Never its message,
 * which may quote the body (JSON.parse's does), and never the body.
 */
function unexpectedError(config: IntakeConfig, error: unknown, stage: string): IntakeResult {
  const name = error instanceof Error ? error.name : typeof error;
  // Stack frames only: the first line (and any line a multi-line message spans) is the message.
  const at =
    error instanceof Error
      ? error.stack
          ?.split('\n')
          .map((line) => line.trim())
          .filter((line) => line.startsWith('at '))
          .slice(0, 3)
      : undefined;
  config.logger?.error({ stage, error: name, at }, 'unexpected error while receiving a webhook');
  return {
    outcome: 'failed',
    answer: errorAnswer(500, 'INTERNAL_ERROR', 'The receiver failed unexpectedly; the event was not accepted. Retry later.', {
      cause: name,
    }),
  };
}

/** Keys of each account's secrets, made once per routes snapshot (a snapshot is replaced whole, never edited). */
const accountKeys = new WeakMap<RoutedAccount, Keys>();

function keysOfAccount(routed: RoutedAccount): Keys {
  let keys = accountKeys.get(routed);
  if (keys === undefined) {
    const secrets = Object.freeze(routed.secrets.filter((s) => s.length > 0));
    keys = Object.freeze({ secrets, fingerprints: Object.freeze(secrets.map(secretFingerprint)) });
    accountKeys.set(routed, keys);
  }
  return keys;
}

/**
 * The account a request goes to, by its path: `/webhooks` the default account, `/webhooks/<key>`
 * the account whose path has that key, verified with that account's secrets only. An unknown key
 * is 404 and a disabled account 403, both before the body is read, and nothing is stored.
 */
function routeOf(config: IntakeConfig, routeKey: string | undefined): Routing {
  if (routeKey === undefined) return { ok: true, account: DEFAULT_ACCOUNT, keys: config.keys };
  if (config.accounts === 'unavailable') {
    return {
      ok: false,
      result: {
        outcome: 'unavailable',
        answer: errorAnswer(
          503,
          'ACCOUNTS_UNAVAILABLE',
          'The accounts this receiver serves cannot be read now; nothing was stored. Retry later.',
          {},
          { 'Retry-After': RETRY_AFTER_SECONDS, Connection: 'close' },
        ),
      },
    };
  }
  const routed = config.accounts?.route(routeKey);
  if (routed === undefined) {
    return {
      ok: false,
      result: {
        outcome: 'refused',
        answer: errorAnswer(404, 'UNKNOWN_WEBHOOK_PATH', 'No account receives webhooks at this path.', {}, { Connection: 'close' }),
      },
    };
  }
  if (routed.state !== 'active') {
    return {
      ok: false,
      result: {
        outcome: 'refused',
        account: routed.account,
        answer: errorAnswer(
          403,
          'ACCOUNT_DISABLED',
          'This account is disabled on this receiver: nothing was stored. Enable it to receive its webhooks again.',
          {},
          { Connection: 'close' },
        ),
      },
    };
  }
  // An account is never unsigned: with no secret, nothing verifies (and nothing is stored).
  return { ok: true, account: routed.account, keys: keysOfAccount(routed) };
}

/** The checks of one request in order: size, signature, envelope, durable store; then the answer. */
async function receiveOrThrow(
  config: IntakeConfig,
  routing: Extract<Routing, { ok: true }>,
  { rawBody, headers }: IncomingRequest,
  span: Span | undefined,
): Promise<IntakeResult> {
  if (rawBody.byteLength > config.maxBodyBytes) {
    return { outcome: 'refused', answer: tooLarge(config.maxBodyBytes) };
  }
  let secretId: string | null = null;
  // One read: a rotation landing mid-request cannot pair a secret with another set's fingerprint.
  const { keys } = routing;
  if (keys.secrets.length === 0 && routing.account !== DEFAULT_ACCOUNT) {
    return { outcome: 'refused', answer: signatureRefused(config.signatureHeader, 'MISMATCH') };
  }
  if (keys.secrets.length > 0) {
    const verification = verify(keys.secrets, rawBody, headerValue(headers, config.signatureHeader));
    if (!verification.ok) return { outcome: 'refused', answer: signatureRefused(config.signatureHeader, verification.reason) };
    secretId = keys.fingerprints[verification.secretIndex]!;
  }

  const reading = readEnvelope(rawBody);
  const delivery = deliveryOf(routing.account, rawBody, reading, new Date(config.now()).toISOString(), secretId);
  if (reading.ok) {
    const announced = headerValue(headers, config.eventHeader);
    if (announced !== undefined && announced !== reading.envelope.event) {
      config.logger?.warn(
        { ...spanIds(span), header: config.eventHeader, announced, kind: reading.envelope.event },
        'event header differs from the body; the body wins',
      );
    }
  }

  const stored =
    config.tracing === undefined || span === undefined
      ? await config.store(delivery, reading)
      : await storeTraced(config.tracing, span, config.store, delivery, reading);
  if (!stored.ok) {
    config.logger?.error(
      { ...spanIds(span), code: stored.code, kind: delivery.kind ?? undefined },
      'could not store a webhook delivery; answered 503',
    );
    return {
      outcome: 'unavailable',
      answer: errorAnswer(
        503,
        'STORAGE_UNAVAILABLE',
        'The event could not be stored; it was not accepted. Retry later.',
        { cause: stored.code },
        { 'Retry-After': RETRY_AFTER_SECONDS },
      ),
    };
  }
  const verified = secretId === null ? {} : { secretFingerprint: secretId };
  if (!reading.ok)
    return {
      outcome: 'kept_invalid',
      answer: notAnEvent(reading),
      ...verified,
      ...(stored.inboxId !== null && { inboxId: stored.inboxId }),
    };
  return {
    outcome: stored.duplicate ? 'duplicate' : 'stored',
    ...verified,
    kind: reading.envelope.event,
    identity: reading.identity,
    ...(stored.inboxId !== null && { inboxId: stored.inboxId }),
    answer: { status: 200, headers: {}, body: { received: true, duplicate: stored.duplicate } },
  };
}

/** The 401 for a signature that is missing, malformed, repeated or does not match. */
function signatureRefused(header: string, reason: 'MISSING' | 'MALFORMED' | 'REPEATED' | 'MISMATCH'): Answer {
  if (reason === 'MISSING') return errorAnswer(401, 'MISSING_SIGNATURE', `The ${header} header is missing.`, { header });
  return errorAnswer(
    401,
    'INVALID_SIGNATURE',
    reason === 'REPEATED' ? `The ${header} header was sent more than once.` : `The ${header} header does not match the body.`,
    {
      header,
      reason:
        reason === 'MALFORMED'
          ? 'expected sha256= followed by 64 hex digits'
          : reason === 'REPEATED'
            ? 'the header was sent more than once; send one signature'
            : 'no configured secret matches',
    },
  );
}

/** The 400 for a body kept as a dead letter: not JSON we can read faithfully, or not an envelope. */
function notAnEvent(reading: Extract<ReturnType<typeof readEnvelope>, { ok: false }>): Answer {
  return reading.reason === 'INVALID_JSON'
    ? errorAnswer(400, 'INVALID_JSON', 'The body is not JSON this receiver can read faithfully (UTF-8, RFC 8259 and 7493).', {
        issues: reading.issues,
      })
    : errorAnswer(400, 'INVALID_ENVELOPE', 'The body is not an event envelope {event, timestamp, data}.', { issues: reading.issues });
}

export type Intake = ReturnType<typeof createIntake>;

/** The 503 for a body not read because the bodies held already fill the budget: the sender retries. */
export function busy(budget: BodyBudget): Answer {
  return errorAnswer(
    503,
    'BUSY',
    'The receiver is holding as many request bodies as it allows; this one was not read. Retry later.',
    { buffered_limit_bytes: budget.limitBytes },
    { 'Retry-After': RETRY_AFTER_SECONDS, Connection: 'close' },
  );
}

/** The answer to a body cut off before its end (the connection closes): room made for another client's, or too slow. */
export function cutOff(reason: CutReason, budget: BodyBudget): Answer {
  return reason === 'evicted'
    ? errorAnswer(
        503,
        'BUSY',
        'The receiver needed the room this unfinished body held for other requests; it was not read to its end. Retry.',
        { buffered_limit_bytes: budget.limitBytes },
        { 'Retry-After': RETRY_AFTER_SECONDS, Connection: 'close' },
      )
    : errorAnswer(
        408,
        'REQUEST_TIMEOUT',
        `The body came slower than ${budget.minBytesPerSecond} bytes a second; it was not read to its end.`,
        {},
        { Connection: 'close' },
      );
}

export function tooLarge(limit: number): Answer {
  return errorAnswer(413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${limit} bytes.`, { limit_bytes: limit });
}

/** The 429 of a client address over its budget of failed requests while requests contend (admission.ts). */
export function tooManyFailures(retryAfterSeconds: number): Answer {
  const seconds = String(retryAfterSeconds);
  return errorAnswer(
    429,
    'RATE_LIMIT_EXCEEDED',
    `Too many requests from this address failed verification while others are waiting; retry after ${seconds} s.`,
    { retry_after: retryAfterSeconds },
    { 'Retry-After': seconds, Connection: 'close' },
  );
}

/** The 400 for a body that came in too many pieces for its size (body-buffer.ts); the rest is not read. */
export function fragmented(): Answer {
  return errorAnswer(
    400,
    'BODY_TOO_FRAGMENTED',
    `The body came in too many pieces for its size: past ${FREE_PIECES} pieces, send at least ${MIN_PIECE_BYTES} bytes a piece on average.`,
    { free_pieces: FREE_PIECES, min_piece_bytes: MIN_PIECE_BYTES },
  );
}
