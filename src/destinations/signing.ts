// Standard Webhooks signing (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp`
// (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per
// current secret, space-separated), the key being the base64 after `whsec_`. An asymmetric key
// (`whsk_`, Ed25519) signs `v1a,<base64 Ed25519 signature of the same content>`: its receiver holds
// the public key (`whpk_`, base64 of its 32 raw bytes) and no secret.
import { createHash, createHmac, createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { Change } from '../project/changes.js';
import { DestinationRequestError } from './errors.js';

const PREFIX = 'whsec_';

/** A new secret: `whsec_` and 32 random bytes as base64. */
export function generateSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The key a secret stands for; a secret without `whsec_` (given before 0.6.0 refused them) is used as its UTF-8 bytes. */
function keyOf(secret: string): Buffer {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/**
 * Refuses a secret that is not `whsec_` and base64 (the Standard Webhooks libraries receivers use
 * base64-decode what follows the prefix: a secret of other bytes could not be verified with them),
 * or one too short to sign with (16 bytes of key at least).
 */
export function checkSecret(secret: string): void {
  if (!secret.startsWith(PREFIX) || !/^[A-Za-z0-9+/]+={0,2}$/.test(secret.slice(PREFIX.length)))
    throw new DestinationRequestError(
      'a destination secret is whsec_ and base64 (Standard Webhooks: `whsec_$(openssl rand -base64 32)`); give none to have one generated',
    );
  if (keyOf(secret).length < 16) throw new DestinationRequestError('the secret is shorter than 16 bytes; give none to have one generated');
}

/**
 * Stable for one change and one destination, so that a receiver drops repeats; and different if a
 * `seq` were ever given again to another change, since it hashes what the change is about.
 */
export function webhookId(destination: string, change: Pick<Change, 'seq' | 'entity' | 'id' | 'events'>): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([change.entity, change.id, change.events]))
    .digest('hex')
    .slice(0, 16);
  return `${destination}_${change.seq}_${hash}`;
}

const SIGNING_KEY = 'whsk_';
// The DER prefix of an Ed25519 private key in PKCS #8 (RFC 8410), before its 32-byte seed.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Whether a destination's secret is an Ed25519 signing key (`whsk_`), which signs `v1a`. */
export function isSigningKey(secret: string): boolean {
  return secret.startsWith(SIGNING_KEY);
}

function privateKeyOf(secret: string): KeyObject {
  const seed = Buffer.from(secret.slice(SIGNING_KEY.length), 'base64');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
}

/** The public key of a signing key: `whpk_` and the base64 of its 32 raw bytes, what a receiver verifies `v1a` with. */
export function publicKeyOf(secret: string): string {
  const { x } = createPublicKey(privateKeyOf(secret)).export({ format: 'jwk' });
  return `whpk_${Buffer.from(x!, 'base64url').toString('base64')}`;
}

/** A new Ed25519 signing key: `whsk_` and the base64 of its 32-byte seed (sealed, never shown). */
export function generateSigningKey(): string {
  return `${SIGNING_KEY}${randomBytes(32).toString('base64')}`;
}

/** `v1,<HMAC>` for each secret, `v1a,<Ed25519 signature>` for each signing key, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  const content = `${id}.${timestamp}.${body}`;
  return secrets
    .map((secret) =>
      isSigningKey(secret)
        ? `v1a,${sign(null, Buffer.from(content, 'utf8'), privateKeyOf(secret)).toString('base64')}`
        : `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`,
    )
    .join(' ');
}
