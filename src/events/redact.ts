// What an erased candidate's stored events become (docs/projection.md section 8): the envelope with
// `data` reduced to its keys, or a marker for a body that was not an envelope. Kind, timestamp and
// identity stay (the identity is kept beside the body), so a redelivery is still a duplicate.
import type { Issue } from './issue.js';
import { idText } from './order.js';
import { readEnvelope } from './parse.js';
import { parseInstant } from './timestamp.js';

/** The body of a redacted row that was not an event envelope. */
export const REDACTED_MARKER = '{"redacted":true}';

/**
 * The reasons kept for a redacted row that was set aside: those it had may quote the body (a
 * parser's error does: `…"phone":+336…`), and the body they were about is gone.
 */
export const REDACTED_REASONS: readonly Issue[] = Object.freeze([
  { path: '', message: 'redacted (erasure or retention): the body and its reasons are gone' },
]);
/** The same, as the inbox's `reasons` column stores it. */
export const REDACTED_REASONS_JSON = JSON.stringify(REDACTED_REASONS);

/** The bytes that replace a stored body naming an erased candidate. */
export function redactedBody(raw: Uint8Array): Uint8Array {
  const reading = readEnvelope(raw);
  if (!reading.ok) return Buffer.from(REDACTED_MARKER, 'utf8');
  const { event, timestamp, data } = reading.envelope;
  const kept: Record<string, unknown> = {};
  if (data.campaign_id !== undefined) kept.campaign_id = data.campaign_id;
  if (data.candidate_id !== undefined) kept.candidate_id = data.candidate_id;
  return Buffer.from(JSON.stringify({ event, timestamp, data: kept }), 'utf8');
}

/** The candidate an event's data names, as its handler key spells it; undefined when none. */
export function namedCandidate(data: Record<string, unknown>): string | undefined {
  const id = data.candidate_id;
  return id === undefined || id === null ? undefined : idText(id);
}

/**
 * Whether an event about an erased candidate must change nothing: dated at or before the erasure,
 * or written by reconciliation (which never brings an erased person back, whatever its date).
 * `erasures` maps a candidate to the instant (ms) of its latest erasure.
 */
export function erasedBy(
  event: { event: string; data: Record<string, unknown> },
  instant: number,
  erasures: ReadonlyMap<string, number>,
): boolean {
  const candidate = namedCandidate(event.data);
  if (candidate === undefined) return false;
  const erasedAt = erasures.get(candidate);
  if (erasedAt === undefined) return false;
  return event.event.startsWith('reconcile.') || instant <= erasedAt;
}

/** Erasure instants as the store gives them (ISO text or Date), in ms. */
export function erasureInstants(rows: Iterable<{ candidate_id: string; erased_at: string | Date }>): Map<string, number> {
  const map = new Map<string, number>();
  for (const row of rows) {
    const at = typeof row.erased_at === 'string' ? (parseInstant(row.erased_at) ?? Date.parse(row.erased_at)) : row.erased_at.getTime();
    if (!(at <= (map.get(row.candidate_id) ?? -Infinity))) map.set(row.candidate_id, at);
  }
  return map;
}
