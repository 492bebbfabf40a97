// An event's identity (docs/projection.md section 1) is SHA-256 hex everywhere above the store; the
// inbox keeps its 32 bytes (half the row's and the unique indexes' bytes for it). The store converts
// as it writes and reads. A value of another form (a row written by hand) is kept, and read, as text.

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** An identity as the inbox stores it: its bytes, or the text itself when it is not SHA-256 hex. */
export function identityBytes(identity: string): Buffer | string;
export function identityBytes(identity: string | null): Buffer | string | null;
export function identityBytes(identity: string | null): Buffer | string | null {
  return identity === null || !SHA256_HEX.test(identity) ? identity : Buffer.from(identity, 'hex');
}

/** An identity as read from the inbox, in hex (text read back as it is). */
export function identityText(stored: unknown): string | null {
  if (stored === null || stored === undefined) return null;
  return typeof stored === 'string' ? stored : Buffer.from(stored as Uint8Array).toString('hex');
}
