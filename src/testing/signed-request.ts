import { DEFAULT_EVENT_HEADER, DEFAULT_SIGNATURE_HEADER } from '../receive/intake.js';
import { sign, type Secret } from '../signature.js';

/** How `signedRequest` and `sendSigned` sign. */
export interface SignedRequestOptions {
  /** The shared secret; without it the request goes unsigned (for `allowUnsigned` receivers). */
  secret?: Secret;
  /** The signature's header. Default `X-Service-Signature`. */
  signatureHeader?: string;
  /** The event name's header. Default `X-Service-Event`. */
  eventHeader?: string;
}

/** A request body and the headers the service would send with it. */
export interface SignedRequest {
  /**
   * The exact bytes to send, over a plain `ArrayBuffer`: `fetch` (whose `BodyInit` refuses a
   * `Buffer<ArrayBufferLike>` under strict checks with recent @types/node) and node:http's
   * `request.end()` both take it.
   */
  body: Buffer<ArrayBuffer>;
  /** The content type, the event name and, with a secret, the signature. */
  headers: Record<string, string>;
}

/**
 * Builds the request the service would send for an event: the JSON body and its headers,
 * signed as the service signs. Strings and bytes are sent exactly as given (to test odd
 * spacing, key order or broken bodies); objects are serialised with `JSON.stringify`.
 */
export function signedRequest(event: unknown, options: SignedRequestOptions = {}): SignedRequest {
  const body =
    typeof event === 'string'
      ? Buffer.from(event, 'utf8')
      : event instanceof Uint8Array
        ? Buffer.from(event)
        : Buffer.from(JSON.stringify(event), 'utf8');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const kind =
    (event !== null && typeof event === 'object' && !(event instanceof Uint8Array) && (event as { event?: unknown }).event) || undefined;
  if (typeof kind === 'string') headers[(options.eventHeader ?? DEFAULT_EVENT_HEADER).toLowerCase()] = kind;
  if (options.secret !== undefined) {
    headers[(options.signatureHeader ?? DEFAULT_SIGNATURE_HEADER).toLowerCase()] = sign(options.secret, body);
  }
  return { body, headers };
}

/** POSTs a signed event to a receiver and returns its status and parsed JSON answer. */
export async function sendSigned(
  url: string,
  event: unknown,
  options: SignedRequestOptions = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const request = signedRequest(event, options);
  const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}
