import { campaignText, parseInstant, rawIdentity, subjectKey, type EnvelopeReading, type Issue } from '../events/index.js';

/** How a stored body read: an event envelope (`accepted`), not JSON, or JSON that is not an envelope. */
export type DeliveryVerdict = 'accepted' | 'invalid_json' | 'invalid_envelope';

/** What the intake keeps of one authenticated request, before answering it. */
export interface Delivery {
  /** The account it was sent to (its webhook path): its identity, rows and handlers are that account's only. */
  account: string;
  /** The exact bytes received. */
  raw: Uint8Array;
  /** When it was received: UTC ISO 8601 with milliseconds. */
  receivedAt: string;
  /** docs/projection.md identity; null when the body is not an event. */
  identity: string | null;
  /**
   * The instant of the event's timestamp (Unix ms), which its identity determines: the inbox files
   * the identity under it, so that new keys land at the index's right edge. Null when the body is
   * not an event or its timestamp cannot be read.
   */
  eventAt: number | null;
  /**
   * SHA-256 of the raw bytes when the body is not an event (not JSON, not an envelope, not
   * faithfully representable): the identity of its dead letter, so that a retried bad body is
   * stored once. Null or absent for events: they are told apart by `identity`.
   */
  rawSha256?: string | null;
  /** The body's `event`, as sent (null when the body is not an envelope). */
  kind: string | null;
  /** The candidate, campaign or account it is about (`subjectKey`): its handlers run in order with that key's others. */
  handlerKey?: string | null;
  /** `data.campaign_id` of an accepted body, as text (`idText`); null when it has none. The event lists filter by it. */
  campaignId?: string | null;
  /** How its body read (`accepted`: an envelope; the others are dead letters). */
  verdict: DeliveryVerdict;
  /** Fingerprint of the secret that matched; null when unsigned events are allowed. */
  secretId: string | null;
  /** Why a body that is not an envelope was refused. */
  reasons: Issue[] | null;
  /** The W3C traceparent of the request that brought it, when tracing is on: its processing links to it. */
  traceContext?: string | null;
}

/** What the store says about a delivery: durably written (maybe as a duplicate), or not at all. */
export type StoreOutcome =
  | { ok: true; inboxId: number; duplicate: false }
  | { ok: true; inboxId: null; duplicate: true }
  | { ok: false; code: string; message: string };

/**
 * Resolves only once the delivery is on disk (or is known not to be). `reading` is how the intake
 * read `delivery.raw`: a store may hand it on to a projection in the same process, which then need
 * not read the stored bytes again.
 */
export type StoreDelivery = (delivery: Delivery, reading?: EnvelopeReading) => Promise<StoreOutcome>;

/** How the inbox files an event's identity: under the instant of its timestamp (null when unreadable). */
export function identityKeyOf(reading: Extract<EnvelopeReading, { ok: true }>): { identity: string; eventAt: number | null } {
  return { identity: reading.identity, eventAt: parseInstant(reading.envelope.timestamp) };
}

/** What is kept of an authenticated body, given how it read (HTTP and replay alike). */
export function deliveryOf(
  account: string,
  raw: Uint8Array,
  reading: EnvelopeReading,
  receivedAt: string,
  secretId: string | null,
): Delivery {
  return {
    account,
    raw,
    receivedAt,
    ...(reading.ok ? identityKeyOf(reading) : { identity: null, eventAt: null }),
    rawSha256: reading.ok ? null : rawIdentity(raw),
    kind: reading.ok ? reading.envelope.event : null,
    handlerKey: reading.ok ? subjectKey(reading.envelope) : null,
    campaignId: reading.ok ? campaignText(reading.envelope.data) : null,
    verdict: reading.ok ? 'accepted' : reading.reason === 'INVALID_JSON' ? 'invalid_json' : 'invalid_envelope',
    secretId,
    reasons: reading.ok ? null : reading.issues,
  };
}
