// One POST of one change to one destination (docs/destinations.md): JSON, signed per Standard
// Webhooks, 15 s at most, never following a redirect (a 3xx is a failure, so a body and its
// signature never go to a host the operator did not name). What the loop is told carries a status
// and a short reason, never the body or a secret.
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

/** The URL fetch is given (it refuses user info) and the Basic authorization the user info stood for. */
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
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return (error as Error).name === 'AbortError' ? 'stopped' : 'the request failed';
}

export async function postChange(
  destination: OpenedDestination,
  message: SignedMessage,
  options: { signal: AbortSignal; timeoutMs?: number; now: () => number },
): Promise<DeliveryOutcome> {
  const { url, authorization } = target(destination.url);
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DELIVERY_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.any([timeout, options.signal]),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'prequal-hooks destinations',
        'webhook-id': message.id,
        'webhook-timestamp': String(message.timestamp),
        'webhook-signature': signatureHeader(destination.secrets, message.id, message.timestamp, message.body),
        ...(authorization !== undefined && { authorization }),
      },
      body: message.body,
    });
  } catch (error) {
    return { ok: false, status: null, error: failureOf(error, timeout.aborted), gone: false, retryAfterMs: undefined };
  }
  await response.body?.cancel().catch(() => undefined);
  const { status } = response;
  if (status >= 200 && status < 300) return { ok: true, status };
  const slowDown = status === 429 || status === 503;
  return {
    ok: false,
    status,
    error: status >= 300 && status < 400 ? `redirected (${status}); destinations do not follow redirects` : `answered ${status}`,
    gone: status === 410,
    retryAfterMs: slowDown ? retryAfterMs(response.headers.get('retry-after'), options.now()) : undefined,
  };
}
