import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A shared secret as configured in the agency dashboard. */
export type Secret = string | Uint8Array;
/** The exact bytes received; a string is taken as its UTF-8 bytes. */
export type RawBody = Uint8Array | string;

const PREFIX = 'sha256=';
const SIGNATURE = /^sha256=[0-9a-fA-F]{64}$/;

function digest(secret: Secret, body: RawBody): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

/** `sha256=` + the lowercase hex HMAC-SHA256 of the raw body, as the service signs. */
export function sign(secret: Secret, body: RawBody): string {
  return PREFIX + digest(secret, body).toString('hex');
}

/** Which secret verified a signature (its index in the list given), or why none did. */
export type Verification = { ok: true; secretIndex: number } | { ok: false; reason: 'MISSING' | 'MALFORMED' | 'REPEATED' | 'MISMATCH' };

/**
 * Checks a signature header against the raw body with the secret, or each of several secrets in
 * turn (during a rotation), and says which one matched. Compares digests in constant time. Never
 * throws on what the sender put in the header: absent or empty (`MISSING`), sent twice
 * (`REPEATED`), unprefixed, short or non-hex (`MALFORMED`).
 *
 *   verify(process.env.WEBHOOK_SECRET!, rawBody, req.headers['x-service-signature'])
 */
export function verify(
  secrets: Secret | readonly Secret[],
  body: RawBody,
  header: string | readonly string[] | null | undefined,
): Verification {
  const candidates: readonly Secret[] = typeof secrets === 'string' || secrets instanceof Uint8Array ? [secrets] : secrets;
  // A repeated header reaches us as an array (raw headers) or joined with ", " (node, fetch).
  if (typeof header !== 'string' && header != null && header.length > 1) return { ok: false, reason: 'REPEATED' };
  const value = typeof header === 'string' ? header : header?.[0];
  if (value === undefined || value === '') return { ok: false, reason: 'MISSING' };
  if (!SIGNATURE.test(value)) {
    return value.split(',').filter((part) => part.trim().startsWith(PREFIX)).length > 1
      ? { ok: false, reason: 'REPEATED' }
      : { ok: false, reason: 'MALFORMED' };
  }
  const received = Buffer.from(value.slice(PREFIX.length), 'hex');
  for (let i = 0; i < candidates.length; i++) {
    if (timingSafeEqual(digest(candidates[i]!, body), received)) return { ok: true, secretIndex: i };
  }
  return { ok: false, reason: 'MISMATCH' };
}

/**
 * A short, non-reversible name for a secret (first 12 hex of its SHA-256), stored with each
 * delivery to say which secret of a rotation matched, without keeping the secret itself.
 */
export function secretFingerprint(secret: Secret): string {
  return createHash('sha256').update(secret).digest('hex').slice(0, 12);
}
