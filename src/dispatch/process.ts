import { parseEvent, readEnvelope, type EnvelopeReading, type Issue, type WebhookEvent } from '../events/index.js';
import type { Projection } from '../project/write.js';

export type Processed =
  | { state: 'projected'; event: WebhookEvent; identity: string; instant: number }
  | { state: 'unknown' | 'dead'; kind: string | null; issues: Issue[] };

/**
 * Parses a stored delivery and projects it: the one path every event takes, from HTTP or from
 * replay. Synchronous and without its own transaction: the caller commits the projection
 * together with the inbox row's new state.
 */
export function processDelivery(projection: Projection, raw: Uint8Array, alreadyRead?: EnvelopeReading): Processed {
  const envelope = alreadyRead ?? readEnvelope(raw);
  if (!envelope.ok) return { state: 'dead', kind: null, issues: envelope.issues };
  const reading = parseEvent(envelope.envelope);
  if (!reading.ok) {
    return { state: reading.reason === 'UNKNOWN_KIND' ? 'unknown' : 'dead', kind: reading.kind, issues: reading.issues };
  }
  const projectable = { event: reading.event, instant: reading.instant, identity: envelope.identity };
  projection.apply(projectable);
  return { state: 'projected', ...projectable };
}
