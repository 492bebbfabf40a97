// One POST of one change to one destination (docs/destinations.md): JSON, signed per Standard
// Webhooks, 15 s at most, never following a redirect (a 3xx is a failure, so a body and its
// signature never go to a host the operator did not name). What the loop is told carries a status
// and a short reason, never the body or a secret.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { OpenedDestination } from './registry.js';
import { retryAfterMs } from './schedule.js';
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

// node:http(s) with keep-alive agents rather than fetch: a quarter of fetch's CPU a request
// (bench:destinations; about 90 against 450 µs for a small POST on loopback), spent on the event
// loop the intake shares. Idle sockets are closed after 4 s, before a server's usual 5 s, so that a
// request is rarely sent on a socket the server is closing.
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 64, timeout: 4000, scheduling: 'lifo' as const };
const agents = { 'http:': new HttpAgent(AGENT_OPTIONS), 'https:': new HttpsAgent(AGENT_OPTIONS) };

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
function failureOf(error: unknown, timedOut: boolean): string {
  if (timedOut) return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== 'ABORT_ERR') return code;
  return (error as Error).name === 'AbortError' ? 'stopped' : 'the request failed';
}

/** POSTs the body; the status and Retry-After once the answer's head came (its body is read and dropped). */
function post(
  url: URL,
  headers: Record<string, string | number>,
  body: string,
  signal: AbortSignal,
): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: 'POST', agent: agents[url.protocol as 'http:' | 'https:'], headers, signal }, (response) => {
      response.resume(); // the body is not read: drained, so that the socket is kept for the next request
      response.on('error', () => undefined);
      const retryAfter = response.headers['retry-after'];
      resolve({ status: response.statusCode ?? 0, retryAfter });
    });
    request.on('error', reject);
    request.end(body);
  });
}

export async function postChange(
  destination: OpenedDestination,
  message: SignedMessage,
  options: { signal: AbortSignal; timeoutMs?: number; now: () => number },
): Promise<DeliveryOutcome> {
  const { url, authorization } = target(destination.url);
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DELIVERY_TIMEOUT_MS);
  let answer: { status: number; retryAfter: string | undefined };
  try {
    answer = await post(
      url,
      {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(message.body),
        'user-agent': 'prequal-hooks destinations',
        'webhook-id': message.id,
        'webhook-timestamp': String(message.timestamp),
        'webhook-signature': signatureHeader(destination.secrets, message.id, message.timestamp, message.body),
        ...(authorization !== undefined && { authorization }),
      },
      message.body,
      AbortSignal.any([timeout, options.signal]),
    );
  } catch (error) {
    return { ok: false, status: null, error: failureOf(error, timeout.aborted), gone: false, retryAfterMs: undefined };
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
