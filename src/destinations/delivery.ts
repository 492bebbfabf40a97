// One POST of one change to one destination (docs/destinations.md): JSON, signed per Standard
// Webhooks, 15 s at most for the answer's head and body together, never following a redirect (a
// 3xx is a failure, so a body and its signature never go to a host the operator did not name).
// Each destination has its own connections, 16 at most, only to the addresses the network policy
// allows (network-policy.ts: checked as connected to). An answer's body is read (and dropped) no
// further once 64 KiB have come or the deadline has passed: its connection is then closed, so
// that a receiver that answers and then sends forever costs a few reads. What the loop is told carries a
// status and a short reason, never the body or a secret.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { DeniedAddressError, type NetworkPolicy } from './network-policy.js';
import type { OpenedDestination } from './registry.js';
import { retryAfterMs } from './schedule.js';
import { tokenCache, TokenEndpointError, type TokenCache } from './oauth2.js';
import { signatureHeader } from './signing.js';

export type DeliveryOutcome =
  { ok: true; status: number } | { ok: false; status: number | null; error: string; gone: boolean; retryAfterMs: number | undefined };

export interface SignedMessage {
  id: string;
  /** Unix seconds. */
  timestamp: number;
  body: string;
}

export const DELIVERY_TIMEOUT_MS = 15_000;

/** Once this much of an answer's body has come, the rest is never read: its connection is closed. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** Requests (and so connections) to one destination at once, at most. */
export const MAX_CONNECTIONS = 16;

/** The connections of one destination: kept alive between its requests, `maxSockets` at most, only where `policy` allows. */
export interface DestinationConnections {
  readonly agents: { readonly 'http:': HttpAgent; readonly 'https:': HttpsAgent };
  readonly policy: NetworkPolicy;
  /** Its OAuth2 client's tokens, when it has one. */
  readonly tokens: TokenCache;
  /** Closes every connection, idle or in use (a request on one fails); they are made again at need. */
  close(): void;
}

// node:http(s) with keep-alive agents rather than fetch: a quarter of fetch's CPU a request
// (bench:destinations; about 90 against 450 µs for a small POST on loopback), spent on the event
// loop the intake shares. Idle sockets are closed after 4 s, before a server's usual 5 s, so that a
// request is rarely sent on a socket the server is closing. An agent per destination, so that
// the cap is the destination's: one that holds its connections does not take another's.
export function destinationConnections(policy: NetworkPolicy, maxSockets = MAX_CONNECTIONS): DestinationConnections {
  const options = { keepAlive: true, maxSockets, maxTotalSockets: maxSockets, timeout: 4000, scheduling: 'lifo' as const };
  const agents = { 'http:': new HttpAgent(options), 'https:': new HttpsAgent(options) };
  return {
    agents,
    policy,
    tokens: tokenCache(policy),
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

/** The URL without its user info, and the Basic authorization the user info stood for. */
function target(address: string): { url: URL; authorization: string | undefined } {
  const url = new URL(address);
  if (url.username === '' && url.password === '') return { url, authorization: undefined };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url, authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}

/** Why a request failed, without its URL (which may hold a password) or body. */
function failureOf(error: unknown, ended: 'timeout' | 'stopped' | undefined, timeoutMs: number): string {
  if (ended === 'timeout') return `no answer within ${timeoutMs / 1000} s`;
  if (ended === 'stopped') return 'stopped';
  if (error instanceof DeniedAddressError) return error.message;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return 'the request failed';
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

/**
 * POSTs the body; the status and Retry-After once the answer's body ended, or was cut (past
 * MAX_ANSWER_BYTES, or `signal` aborted meanwhile: the head came, so the status stands). `signal`
 * ends the request at any point, its connection closed.
 */
function post(
  url: URL,
  request: {
    headers: Record<string, string | number>;
    body: string;
    connections: DestinationConnections;
    tls: OpenedDestination['tls'];
  },
  signal: AbortSignal,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // Set once the head came: from then on, the request ends with it, however its body ends.
    let answer: Answer | undefined;
    const { connections } = request;
    const options = {
      method: 'POST',
      agent: connections.agents[url.protocol as 'http:' | 'https:'],
      headers: request.headers,
      // A name is checked as it resolves, each time a connection is made: what it resolved to when it was added says nothing.
      lookup: connections.policy.lookup,
      // A client certificate (mutual TLS) and the authorities trusted instead of the system's, for https:// only.
      ...(url.protocol === 'https:' && request.tls),
    };
    const sending = send(url, options, (response) => {
      const head = { status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] };
      answer = head;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) {
          sending.destroy(); // the rest is not read: the connection goes with it
          resolve(head);
        }
      });
      response.on('end', () => resolve(head)); // read to its end: the connection is kept for the next request
      response.on('error', () => resolve(head));
      response.on('close', () => resolve(head));
    });
    const stop = () => sending.destroy(new Error('the request was ended'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    sending.on('close', () => signal.removeEventListener('abort', stop));
    sending.on('error', (error) => (answer === undefined ? reject(error) : resolve(answer)));
    sending.end(request.body);
  });
}

/** The Authorization header: OAuth2's Bearer token (a fresh one when `fresh`), or the Basic of the URL's user info. */
async function authorizationOf(
  destination: OpenedDestination,
  basic: string | undefined,
  fresh: boolean,
  options: { connections: DestinationConnections; timeoutMs: number; signal: AbortSignal },
): Promise<string | undefined> {
  if (destination.oauth2 === undefined) return basic;
  return `Bearer ${await options.connections.tokens.token(destination.oauth2, fresh, options)}`;
}

export async function postChange(
  destination: OpenedDestination,
  message: SignedMessage,
  options: { signal: AbortSignal; connections: DestinationConnections; timeoutMs?: number; now: () => number },
): Promise<DeliveryOutcome> {
  const outcome = await postOnce(destination, message, options, false);
  // A 401 with a cached token: the token is fetched again, once, and the change sent with it.
  if (destination.oauth2 !== undefined && !outcome.ok && outcome.status === 401 && !options.signal.aborted)
    return await postOnce(destination, message, options, true);
  return outcome;
}

async function postOnce(
  destination: OpenedDestination,
  message: SignedMessage,
  options: { signal: AbortSignal; connections: DestinationConnections; timeoutMs?: number; now: () => number },
  freshToken: boolean,
): Promise<DeliveryOutcome> {
  const { url, authorization: basic } = target(destination.url);
  // An address written in the URL is not looked up: checked here, in whatever spelling it was given.
  const refused = options.connections.policy.hostRefusal(url.hostname);
  if (refused !== undefined)
    return { ok: false, status: null, error: new DeniedAddressError(refused).message, gone: false, retryAfterMs: undefined };
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  let authorization;
  try {
    authorization = await authorizationOf(destination, basic, freshToken, { ...options, timeoutMs });
  } catch (error) {
    const reason = error instanceof TokenEndpointError ? error.message : 'the OAuth2 token could not be fetched';
    return { ok: false, status: null, error: reason, gone: false, retryAfterMs: undefined };
  }
  // One deadline for the head and the body, and the caller's stop: either ends the request.
  const ending = new AbortController();
  let ended: 'timeout' | 'stopped' | undefined;
  const end = (why: 'timeout' | 'stopped') => {
    ended ??= why;
    ending.abort();
  };
  const timer = setTimeout(() => end('timeout'), timeoutMs);
  const stopped = () => end('stopped');
  if (options.signal.aborted) stopped();
  else options.signal.addEventListener('abort', stopped, { once: true });
  let answer: Answer;
  try {
    answer = await post(
      url,
      {
        headers: {
          // The operator's headers first: none of them is one of those below (refused when added).
          ...Object.fromEntries(destination.headers ?? []),
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(message.body),
          'user-agent': 'prequal-hooks destinations',
          'webhook-id': message.id,
          'webhook-timestamp': String(message.timestamp),
          'webhook-signature': signatureHeader(destination.secrets, message.id, message.timestamp, message.body),
          ...(authorization !== undefined && { authorization }),
        },
        body: message.body,
        connections: options.connections,
        tls: destination.tls,
      },
      ending.signal,
    );
  } catch (error) {
    return { ok: false, status: null, error: failureOf(error, ended, timeoutMs), gone: false, retryAfterMs: undefined };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', stopped);
  }
  const { status } = answer;
  if (status >= 200 && status < 300) return { ok: true, status };
  const slowDown = status === 429 || status === 503;
  return {
    ok: false,
    status,
    error: status >= 300 && status < 400 ? `redirected (${status}); destinations do not follow redirects` : `answered ${status}`,
    gone: status === 410,
    retryAfterMs: slowDown ? retryAfterMs(answer.retryAfter ?? null, options.now()) : undefined,
  };
}
