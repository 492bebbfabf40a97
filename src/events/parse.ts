import { isUtf8 } from 'node:buffer';
import type { z } from 'zod';
import { hashCanonicalJson } from './canonical.js';
import type { Issue } from './issue.js';
import { parseJson } from './json.js';
import { dataSchemas, isEventKind, TIMESTAMP_MESSAGE, type Envelope, type WebhookEvent } from './schemas.js';
import { parseInstant } from './timestamp.js';

/** Stage one's reading of a body: an envelope and its identity, or why it is not one. */
export type EnvelopeReading =
  { ok: true; envelope: Envelope; identity: string } | { ok: false; reason: 'INVALID_JSON' | 'INVALID_ENVELOPE'; issues: Issue[] };

/** Stage two's reading of an envelope: an event of a known kind and its instant, or why not. */
export type EventReading =
  | { ok: true; event: WebhookEvent; instant: number }
  | { ok: false; reason: 'UNKNOWN_KIND'; kind: string; issues: Issue[] }
  | { ok: false; reason: 'INVALID_DATA'; kind: string; issues: Issue[] };

/** A zod error's issues, with readable paths such as `data.responses[0].score`. */
function issuesOf(error: z.ZodError): Issue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join(''),
    message: issue.message,
  }));
}

/**
 * Stage one, done before acknowledging: is the body an envelope, and what is its identity?
 * `INVALID_JSON` covers every body that is not JSON this receiver can read faithfully (I-JSON,
 * RFC 7493): not UTF-8, not JSON, or holding a number beyond the double range or a lone
 * surrogate, which canonical JSON (and SQLite's text) would silently change into another value.
 */
export function readEnvelope(raw: Uint8Array | string, knownIdentity?: string): EnvelopeReading {
  let text: string;
  if (typeof raw === 'string') {
    text = raw;
  } else {
    const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    // Decoding would turn every invalid sequence into U+FFFD, so that different bodies read alike.
    if (!isUtf8(bytes)) return { ok: false, reason: 'INVALID_JSON', issues: [notUtf8(bytes)] };
    text = bytes.toString('utf8');
  }
  let body: unknown;
  try {
    body = parseJson(text);
  } catch (error) {
    return { ok: false, reason: 'INVALID_JSON', issues: [{ path: '', message: (error as Error).message }] };
  }
  const issues = envelopeIssues(body);
  if (issues.length > 0) return { ok: false, reason: 'INVALID_ENVELOPE', issues };
  const envelope = body as Envelope;
  // A stored delivery already carries its identity: no need to hash it again.
  if (knownIdentity !== undefined) return { ok: true, envelope, identity: knownIdentity };
  // The identity (docs/projection.md section 1) is the SHA-256 of the whole envelope's canonical JSON.
  const identity = hashCanonicalJson(envelope, true);
  if (!identity.ok) return { ok: false, reason: 'INVALID_JSON', issues: [identity.issue] };
  return { ok: true, envelope, identity: identity.sha256 };
}

/** Where the first byte that starts no valid UTF-8 sequence is (called only once isUtf8 said no). */
function notUtf8(bytes: Uint8Array): Issue {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    // The second byte's range excludes overlong forms, UTF-16 surrogates and code points past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    let valid = length > 0 && (bytes[i + 1] ?? 0) >= low && (bytes[i + 1] ?? 0xff) <= high;
    for (let k = 2; valid && k < length; k++) valid = ((bytes[i + k] ?? 0) & 0xc0) === 0x80;
    if (!valid) break;
    i += length;
  }
  const byte = (bytes[i] ?? 0).toString(16).toUpperCase().padStart(2, '0');
  return { path: '', message: `the body is not UTF-8: byte 0x${byte} at offset ${i} starts no valid UTF-8 sequence` };
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

// The envelope is checked by hand: it runs on every request before the 2xx, and three typeof
// checks say as much as a schema would, in a fraction of the time.
function envelopeIssues(body: unknown): Issue[] {
  if (!isRecord(body)) return [{ path: '', message: `expected an object {event, timestamp, data}, received ${describe(body)}` }];
  const issues: Issue[] = [];
  if (typeof body.event !== 'string') issues.push({ path: 'event', message: `expected a string, received ${describe(body.event)}` });
  if (typeof body.timestamp !== 'string')
    issues.push({ path: 'timestamp', message: `expected a string, received ${describe(body.timestamp)}` });
  if (!isRecord(body.data)) issues.push({ path: 'data', message: `expected an object, received ${describe(body.data)}` });
  return issues;
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
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
  // The kind is known, so its own schemas are checked directly (a union would try them in turn).
  const instant = parseInstant(envelope.timestamp);
  const data = dataSchemas[envelope.event].safeParse(envelope.data);
  if (instant === null || !data.success) {
    const issues = [
      ...(instant === null ? [{ path: 'timestamp', message: TIMESTAMP_MESSAGE }] : []),
      ...(data.success
        ? []
        : issuesOf(data.error).map((i) => ({ ...i, path: i.path === '' ? 'data' : `data.${i.path}`.replace('.[', '[') }))),
    ];
    return { ok: false, reason: 'INVALID_DATA', kind: envelope.event, issues };
  }
  // The schemas only check (no transform, no default), so handlers get the data as parsed: zod's
  // output copy drops own `__proto__` keys, which are part of the event (docs/projection.md section 1).
  const event = { ...envelope, event: envelope.event, timestamp: envelope.timestamp, data: envelope.data } as WebhookEvent;
  return { ok: true, event, instant };
}
