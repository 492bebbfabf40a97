import type { z } from 'zod';
import { eventIdentity } from './identity.js';
import {
  envelopeSchema,
  isEventKind,
  webhookEventSchema,
  type Envelope,
  type WebhookEvent,
} from './schemas.js';
import { parseInstant } from './timestamp.js';

/** A problem found in a body, with a readable path such as `data.interview_score`. */
export interface Issue {
  path: string;
  message: string;
}

export type EnvelopeReading =
  | { ok: true; envelope: Envelope; identity: string }
  | { ok: false; reason: 'INVALID_JSON' | 'INVALID_ENVELOPE'; issues: Issue[] };

export type EventReading =
  | { ok: true; event: WebhookEvent; instant: number }
  | { ok: false; reason: 'UNKNOWN_KIND'; kind: string; issues: Issue[] }
  | { ok: false; reason: 'INVALID_DATA'; kind: string; issues: Issue[] };

export function issuesOf(error: z.ZodError): Issue[] {
  return error.issues.map((issue) => ({
    path: issue.path
      .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
      .join(''),
    message: issue.message,
  }));
}

/** Stage one, done before acknowledging: is the body an envelope, and what is its identity? */
export function readEnvelope(raw: Uint8Array | string): EnvelopeReading {
  let body: unknown;
  try {
    body = JSON.parse(typeof raw === 'string' ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'));
  } catch (error) {
    return { ok: false, reason: 'INVALID_JSON', issues: [{ path: '', message: (error as Error).message }] };
  }
  const result = envelopeSchema.safeParse(body);
  if (!result.success) return { ok: false, reason: 'INVALID_ENVELOPE', issues: issuesOf(result.error) };
  return { ok: true, envelope: result.data, identity: eventIdentity(result.data) };
}

/** Stage two, done by the dispatcher: which of the ten kinds is it, and is its data valid? */
export function parseEvent(envelope: Envelope): EventReading {
  if (!isEventKind(envelope.event)) {
    return {
      ok: false,
      reason: 'UNKNOWN_KIND',
      kind: envelope.event,
      issues: [{ path: 'event', message: `unknown event kind "${envelope.event}"` }],
    };
  }
  const result = webhookEventSchema.safeParse(envelope);
  if (!result.success) return { ok: false, reason: 'INVALID_DATA', kind: envelope.event, issues: issuesOf(result.error) };
  return { ok: true, event: result.data, instant: parseInstant(result.data.timestamp)! };
}
