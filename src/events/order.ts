import { isEventKind, KIND_RANKS, KIND_SUBJECTS, type EventKind } from './schemas.js';

// Shifting by the widest Date range keeps every instant positive, so a fixed-width decimal
// sorts as text: SQLite compares and indexes the key without decoding it.
const INSTANT_SHIFT = 8_640_000_000_000_000;

// One character per rank, so that ranks sort as text: 0-9 as digits (the keys stored before
// reconciliation's kinds existed are unchanged), then a, b, c … (after '9' in code-point order).
const RANK_DIGITS = Object.fromEntries(Object.entries(KIND_RANKS).map(([kind, rank]) => [kind, rank.toString(36)])) as Record<
  EventKind,
  string
>;

/**
 * The total order of docs/projection.md section 2 as one comparable string:
 * instant, then kind rank, then identity. `a < b` as text exactly when a is applied first.
 */
export function orderKey(instant: number, kind: EventKind, identity: string): string {
  return `${String(instant + INSTANT_SHIFT).padStart(17, '0')}:${RANK_DIGITS[kind]}:${identity}`;
}

/** The identity an order key ends with. */
export function identityOfOrderKey(key: string): string {
  return key.slice(key.indexOf(':', key.indexOf(':') + 1) + 1);
}

/** The instant (ms) an order key starts with. */
export function instantOfOrderKey(key: string): number {
  return Number(key.slice(0, 17)) - INSTANT_SHIFT;
}

/**
 * An id as a handler key spells it. Ids are strings (numbers in some senders' JSON, the same digits);
 * anything else, from an envelope not yet validated, is spelled as its JSON rather than "[object Object]".
 */
export function idText(id: unknown): string {
  return typeof id === 'string' ? id : JSON.stringify(id);
}

/** `data.campaign_id` as the inbox keeps it beside the body (null when absent or null). */
export function campaignText(data: Record<string, unknown>): string | null {
  const campaign = data.campaign_id;
  return campaign === undefined || campaign === null ? null : idText(campaign);
}

/**
 * The row an event is about, which orders application handlers: one candidate, one campaign, or
 * the account. Read from the envelope as received, so that it is known from the moment the event
 * is stored, before it is parsed.
 */
export function subjectKey(envelope: { event: string; data: Record<string, unknown> }): string {
  const { candidate_id: candidate, campaign_id: campaign } = envelope.data;
  if (candidate !== undefined && candidate !== null) return `candidate:${idText(candidate)}`;
  const campaignKind = isEventKind(envelope.event) ? KIND_SUBJECTS[envelope.event] === 'campaign' : envelope.event.startsWith('campaign.');
  if (campaign !== undefined && campaign !== null && campaignKind) return `campaign:${idText(campaign)}`;
  return 'credits';
}
