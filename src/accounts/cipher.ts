// Secrets at rest (docs/accounts.md): AES-256-GCM under the accounts key, a random 12-byte IV per
// value, and the account and column as additional data, so that a ciphertext copied to another
// account's row or another column does not decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Which column a ciphertext belongs to: part of its authenticated data. */
export type SealedColumn = 'secret' | 'api_key' | 'destination';

export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** An accounts key and its id (what each ciphertext records, so that a wrong key is named, not guessed). */
export interface AccountsKey {
  readonly id: string;
  readonly key: Uint8Array;
}

/** The id of a key: the first 16 hex digits of its SHA-256 (it reveals nothing of the key). */
function keyIdOf(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

export function accountsKey(key: Uint8Array): AccountsKey {
  if (key.length !== KEY_BYTES) throw new RangeError(`an accounts key is ${KEY_BYTES} bytes, not ${key.length}`);
  return { id: keyIdOf(key), key };
}

/** What a destination's sealed value (src/destinations/registry.ts) is bound to in place of an account: its account and id. */
export function destinationScope(account: string, destination: string): string {
  return `${account}/${destination}`;
}

function additionalData(account: string, column: SealedColumn): Buffer {
  return Buffer.from(`prequal-hooks accounts\0${account}\0${column}`, 'utf8');
}

/** The value encrypted: base64url of IV, ciphertext and tag. */
export function seal(key: AccountsKey, account: string, column: SealedColumn, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(additionalData(account, column));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The value decrypted, or undefined when this key did not seal it for this account and column (or it was altered). */
export function open(key: AccountsKey, account: string, column: SealedColumn, sealed: string): string | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(additionalData(account, column));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
