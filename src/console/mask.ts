// Candidates' data is masked in the console until the operator asks to see it, by what is known to
// hold none: a screen shared or glanced at, or a read-only token, shows who applied and what they
// said only to whom it should. Free text (answers, strengths, an unknown kind's fields) can hold
// anything, so only the fields listed here are shown; everything else is masked.
import { z } from 'zod';
import { dataSchemas, isEventKind, parseJson, timestampSchema, type Issue } from '../events/index.js';
import type { EventSummary } from '../query/index.js';

/** What a masked value shows: nothing of it. */
export const MASKED = '***';

/** `Jean Dupont` → `J*** D***`. */
export function maskName(name: string): string {
  return name
    .split(/(\s+|-)/)
    .map((part) => (/^\s+$|^-$/.test(part) || part === '' ? part : `${[...part][0]}***`))
    .join('');
}

/** `jean.dupont@example.com` → `j***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return maskName(email);
  return `${[...email][0]}***${email.slice(at)}`;
}

/** `+33612345678` → `+33 6** ** ** 78`; other numbers keep their first three and last two digits. */
export function maskPhone(phone: string): string {
  const compact = phone.replace(/[\s.()-]/g, '');
  const french = /^\+33(\d)\d{6}(\d\d)$/.exec(compact);
  if (french) return `+33 ${french[1]}** ** ** ${french[2]}`;
  if (compact.length <= 5) return '*'.repeat(compact.length);
  return `${compact.slice(0, 3)}${'*'.repeat(compact.length - 5)}${compact.slice(-2)}`;
}

/**
 * The fields that hold no personal data: the envelope's kind and time, ids, statuses, scores,
 * dates, flags, counts, and the campaign's own fields (title, contract, link, questions).
 * In a body, one is shown only where its kind's schema declares it and accepts its value.
 */
const SAFE_FIELDS = new Set([
  'event',
  'timestamp',
  'campaign_id',
  'candidate_id',
  'last_campaign_id',
  'job_title',
  'contract_type',
  'candidate_link',
  'questions_count',
  'question',
  'status',
  'old_status',
  'new_status',
  'failure_reason',
  'call_queued',
  'sms_sent',
  'is_sourced',
  'interview_score',
  'score',
  'availability_start',
  'interview_date',
  'interview_started_at',
  'created_at',
  'credits_remaining',
  'threshold',
]);
/** Fields the schemas take as any text, which the service fills with a date: shown only when they hold one. */
const DATE_TEXT_FIELDS = new Set(['availability_start']);
const DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

// Known personal fields keep a hint of their value (`J*** D***`); any other masked value shows nothing.
const NAME_KEYS = new Set(['first_name', 'last_name', 'name', 'full_name']);
const EMAIL_KEYS = new Set(['email', 'e_mail']);
const PHONE_KEYS = new Set(['phone', 'phone_number', 'mobile']);

/** Whether a field's value is known to hold no personal data (and, given its schema, is what the schema expects). */
function safe(key: string, value: unknown, schema?: z.ZodType): boolean {
  if (!SAFE_FIELDS.has(key) || (typeof value === 'object' && value !== null)) return false;
  if (DATE_TEXT_FIELDS.has(key) && !(typeof value === 'string' && DATE.test(value))) return false;
  return schema === undefined || schema.safeParse(value).success;
}

function hinted(key: string, value: unknown): unknown {
  if (typeof value !== 'string') return MASKED;
  if (NAME_KEYS.has(key)) return maskName(value);
  if (EMAIL_KEYS.has(key)) return maskEmail(value);
  if (PHONE_KEYS.has(key)) return maskPhone(value);
  return MASKED;
}

/** A field of a projected row as shown: as it is when revealed or known safe, masked otherwise. */
export function shown(key: string, value: unknown, reveal: boolean): unknown {
  if (reveal || value === null || value === undefined || safe(key, value)) return value;
  return hinted(key, value);
}

/** Below this depth a body's values are masked whole (and the walk stays off the stack's limit). */
const MAX_DEPTH = 64;
/** Keys shown as they are when no schema declares them; others could be anything, a name included. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

function unwrapped(schema: z.ZodType | undefined): z.ZodType | undefined {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  return inner;
}

function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> | undefined {
  const inner = unwrapped(schema);
  return inner instanceof z.ZodObject ? inner.shape : undefined;
}

function elementOf(schema: z.ZodType | undefined): z.ZodType | undefined {
  const inner = unwrapped(schema);
  return inner instanceof z.ZodArray ? (inner.element as z.ZodType) : undefined;
}

/** A value masked by its schema: undefined for what no schema declares (all of it masked). */
function maskValue(value: unknown, key: string, schema: z.ZodType | undefined, depth: number): unknown {
  if (value === null) return null;
  if (typeof value !== 'object') return schema === undefined ? MASKED : safe(key, value, schema) ? value : hinted(key, value);
  if (depth >= MAX_DEPTH) return MASKED;
  if (Array.isArray(value)) {
    const element = elementOf(schema);
    return value.map((item) => maskValue(item, key, element, depth + 1));
  }
  return maskObject(value as Record<string, unknown>, shapeOf(schema), depth + 1);
}

function maskObject(value: Record<string, unknown>, shape: Record<string, z.ZodType> | undefined, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let hidden = 0;
  for (const key of Object.keys(value)) {
    const schema = shape !== undefined && Object.hasOwn(shape, key) ? shape[key] : undefined;
    const name = schema !== undefined || FIELD_NAME.test(key) ? key : `${MASKED} (key ${++hidden})`;
    const masked = maskValue(value[key], key, schema, depth);
    // Defined, not assigned: a `__proto__` key stays a key.
    if (name === '__proto__') Object.defineProperty(out, name, { value: masked, enumerable: true, writable: true, configurable: true });
    else out[name] = masked;
  }
  return out;
}

/** A body masked: the envelope's kind and time, and in the data of a known kind, the safe fields. */
function maskBody(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return maskValue(body, '', undefined, 0);
  const kind = (body as Record<string, unknown>).event;
  const known = typeof kind === 'string' && isEventKind(kind);
  return maskObject(
    body as Record<string, unknown>,
    { event: z.string(), timestamp: timestampSchema, ...(known && { data: dataSchemas[kind] }) },
    0,
  );
}

/** The most of a body a page shows; the rest is cut, and the page says so. */
export const SHOWN_BODY_CHARS = 128 * 1024;

function cut(text: string): string {
  if (text.length <= SHOWN_BODY_CHARS) return text;
  return `${text.slice(0, SHOWN_BODY_CHARS)}\n… (${text.length - SHOWN_BODY_CHARS} more characters not shown)`;
}

/**
 * A body as shown, pretty-printed (two-space indent) when it is JSON. Masked, whatever its size,
 * by `maskBody`; a body that is not JSON cannot be masked by its fields, so nothing of it is
 * shown but its size. Revealed, as it is (its first 128 KiB).
 */
export function showBody(raw: string, reveal: boolean): string {
  if (reveal && raw.length > SHOWN_BODY_CHARS) return cut(raw);
  let parsed: unknown;
  try {
    parsed = parseJson(raw);
  } catch {
    return reveal ? raw : `(${raw.length} characters that are not JSON: nothing of them is shown masked)`;
  }
  if (!reveal) return cut(JSON.stringify(maskBody(parsed), null, 2));
  try {
    return JSON.stringify(parsed, null, 2);
  } catch {
    return raw; // nested deeper than JSON.stringify goes (JSON.parse takes any depth)
  }
}

const PATH = /^(?:(?:[A-Za-z_][\w-]*|\[\d+\])(?:\.[A-Za-z_][\w-]*|\[\d+\])*)?$/;

/**
 * A reason as shown. A path names fields (one that could be anything is masked); a reason about
 * the whole body (not JSON, not UTF-8) may quote it (JSON.parse's message does), so its quoted
 * part is masked.
 */
export function shownIssue(issue: Issue, reveal: boolean): Issue {
  if (reveal) return issue;
  const path = PATH.test(issue.path) ? issue.path : MASKED;
  if (issue.path !== '') return { path, message: issue.message };
  const first = issue.message.search(/["']/);
  const last = Math.max(issue.message.lastIndexOf('"'), issue.message.lastIndexOf("'"));
  return { path, message: first === -1 ? issue.message : `${issue.message.slice(0, first)}"${MASKED}"${issue.message.slice(last + 1)}` };
}

/** A handler's error as shown: its class (`TypeError: ***`), since its message may name the candidate. */
export function shownError(error: string, reveal: boolean): string {
  if (reveal) return error;
  const name = /^([A-Za-z_$][\w$]{0,63}): /.exec(error);
  return name === null ? MASKED : `${name[1]}: ${MASKED}`;
}

/** An inbox row as listed: its reasons masked, and the ids an unknown kind's data gives masked too. */
export function shownSummary(summary: EventSummary, reveal: boolean): EventSummary {
  if (reveal) return summary;
  const known = summary.kind !== null && isEventKind(summary.kind);
  return {
    ...summary,
    campaign_id: known || summary.campaign_id === null ? summary.campaign_id : MASKED,
    candidate_id: known || summary.candidate_id === null ? summary.candidate_id : MASKED,
    reasons: summary.reasons.map((r) => shownIssue(r, false)),
  };
}
