import { hash } from 'node:crypto';
import { hashCanonicalJson, writeCanonicalJson } from './canonical.js';
import type { Issue } from './issue.js';

/** Canonical JSON of a value, or why the value has no faithful canonical JSON. */
export type CanonicalReading = { ok: true; canonical: string } | { ok: false; issue: Issue };

/**
 * Canonical JSON (docs/projection.md section 1): object keys sorted recursively by code point, no
 * insignificant white space, strings and numbers as `JSON.stringify` writes them, every own key
 * kept (`__proto__` and `constructor` included). `undefined` members are left out, as
 * `JSON.stringify` leaves them out. Not ok when the value holds what canonical JSON cannot write
 * faithfully: a non-finite number (`1e400` parses as Infinity, which would be written `null`),
 * a lone surrogate, a BigInt, a cycle.
 */
export function readCanonicalJson(value: unknown): CanonicalReading {
  const written = writeCanonicalJson(value, false);
  if (!written.ok) return written;
  return { ok: true, canonical: typeof written.canonical === 'string' ? written.canonical : written.canonical.toString('utf8') };
}

/** A JSON value that has no faithful canonical JSON (see `readCanonicalJson`). */
export class UnrepresentableJsonError extends Error {
  /** Always `UnrepresentableJsonError`, to tell it apart from other errors. */
  override name = 'UnrepresentableJsonError';
  constructor(
    /** What cannot be represented, and where. */
    readonly issue: Issue,
  ) {
    super(issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`);
  }
}

/** `readCanonicalJson`, throwing `UnrepresentableJsonError` when it is not ok. */
export function canonicalJson(value: unknown): string {
  const reading = readCanonicalJson(value);
  if (!reading.ok) throw new UnrepresentableJsonError(reading.issue);
  return reading.canonical;
}

/** The members of an envelope that its identity reads, whatever their types. */
export interface EnvelopeFields {
  /** The `event` member. */
  event: unknown;
  /** The `timestamp` member. */
  timestamp: unknown;
  /** The `data` member. */
  data: unknown;
}

/** An event's identity, or why its envelope has none (it is then kept under its raw bytes' hash). */
type IdentityReading = { ok: true; identity: string } | { ok: false; issue: Issue };

/**
 * An event's identity (docs/projection.md section 1): SHA-256, lowercase hex, of the canonical JSON
 * of its whole envelope, members beyond `{event, timestamp, data}` included. Deliveries that
 * differ only in key order or spacing share it; envelopes that differ as JSON values never do.
 */
function readIdentity(envelope: EnvelopeFields): IdentityReading {
  const hashed = hashCanonicalJson(envelope, false);
  return hashed.ok ? { ok: true, identity: hashed.sha256 } : hashed;
}

/** `readIdentity`, throwing `UnrepresentableJsonError` when the envelope has no identity. */
export function eventIdentity(envelope: EnvelopeFields): string {
  const reading = readIdentity(envelope);
  if (!reading.ok) throw new UnrepresentableJsonError(reading.issue);
  return reading.identity;
}

/** SHA-256, lowercase hex, of exact bytes: the identity of a body that is not an event. */
export function rawIdentity(raw: Uint8Array): string {
  return hash('sha256', raw, 'hex');
}
